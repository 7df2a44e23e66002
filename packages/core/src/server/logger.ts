/** Structured logging: one JSON object per line, each with time, level and message. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type LogFields = Record<string, unknown>;

export interface Logger {
  log(level: LogLevel, msg: string, fields?: LogFields): void;
}

/** Writes JSON lines to a stream (stdout by default). */
export class JsonLineLogger implements Logger {
  constructor(private readonly write: (line: string) => void = (line) => process.stdout.write(line)) {}

  log(level: LogLevel, msg: string, fields: LogFields = {}): void {
    this.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
  }
}

/** Keeps records in memory (tests, embedding). */
export class MemoryLogger implements Logger {
  readonly records: Array<LogFields & { level: LogLevel; msg: string }> = [];

  log(level: LogLevel, msg: string, fields: LogFields = {}): void {
    this.records.push({ level, msg, ...fields });
  }
}

export const silentLogger: Logger = { log() {} };
