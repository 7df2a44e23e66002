import { Command } from 'commander';

export type CommandRegistration = (program: Command) => void;

/** The `tiffin` program with the given commands registered. */
export function createProgram(registrations: readonly CommandRegistration[]): Command {
  const program = new Command('tiffin')
    .description('Serve machine-learning models from TypeScript')
    .version('0.1.0')
    // Program options only before the command name, so `tiffin build --version 1.0` reaches build.
    .enablePositionalOptions()
    .configureOutput({
      outputError: (text, write) => write(`tiffin: ${text.trimEnd().replace(/\n+/g, ' ')}\n`),
    });
  for (const register of registrations) register(program);
  return program;
}
