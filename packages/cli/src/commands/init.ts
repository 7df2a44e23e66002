import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { reportError } from '../errors.js';
import { tarballSources } from '../init/tarball-sources.js';
import { cliPackageDir, readTemplate, templateNames } from '../init/templates.js';
import { writeProject } from '../init/write-project.js';

interface InitFlags {
  template: string;
}

/** `tiffin init [dir]`: a working project (service, test, package.json, tsconfig, README) from a template. */
export function registerInit(program: Command): void {
  const names = templateNames();
  program
    .command('init')
    .description(
      'Start a project: service.ts, a test, package.json, tsconfig.json and a README (asks nothing)',
    )
    .argument('[dir]', 'folder to create the project in (new or empty)', '.')
    .addOption(
      new Option(
        '-t, --template <name>',
        `what the service does: ${names.map((n) => `${n} (${readTemplate(n).description})`).join('; ')}`,
      )
        .choices(names)
        .default('quickstart'),
    )
    // Read when help is shown, so a broken template folder cannot break every other command.
    .addHelpText('after', () =>
      ['', 'Templates:', ...names.map((n) => `  ${n.padEnd(12)} ${readTemplate(n).description}`)].join('\n'),
    )
    .action((dirArg: string, flags: InitFlags) => {
      try {
        const dir = resolve(dirArg);
        const { version } = JSON.parse(readFileSync(join(cliPackageDir(), 'package.json'), 'utf8')) as {
          version: string;
        };
        const { sources, checkout } = tarballSources(cliPackageDir(), version);
        const written = writeProject(dir, readTemplate(flags.template), version, sources);
        const rel = relative(process.cwd(), dir);
        const cd = rel.startsWith('..') ? dir : rel;
        process.stdout.write(
          [
            `Created a ${flags.template} project in ${dir}:`,
            ...written.map((path) => `  ${path}`),
            '',
            'Next steps:',
            ...(cd ? [`  cd ${cd}`] : []),
            '  npm install      # offline or CPU-only: ONNXRUNTIME_NODE_INSTALL=skip npm install',
            ...(sources
              ? [`  (the @tiffin packages are the tarballs in ${sources.from}: see the README)`]
              : checkout
                ? [
                    `  (the @tiffin packages are not on the npm registry yet: pack them first with`,
                    `   \`npx -y pnpm@10.34.9 tarballs\` in ${checkout}, then \`tiffin init\` a new folder)`,
                  ]
                : []),
            '  npm test         # starts the service in-process and calls it with @tiffin/client',
            '  npm start        # serves it on http://127.0.0.1:3000',
            '',
          ].join('\n'),
        );
      } catch (err) {
        reportError(err);
      }
    });
}
