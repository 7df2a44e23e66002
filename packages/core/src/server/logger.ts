import pino from 'pino';

/** Structured logging: one JSON object per line, each with time, level and message. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type LogFields = Record<string, unknown>;

export interface Logger {
  log(level: LogLevel, msg: string, fields?: LogFields): void;
  /** Write out anything buffered, synchronously (before the process exits or may be killed). */
  flush?(): void;
}

/** Lines gather up to this many bytes before a write to stdout (one syscall for many access-log lines). */
const STDOUT_BATCH_BYTES = 4096;
/** ...and wait at most this long (ms), so a quiet server's lines still show at once to a reader. */
const STDOUT_FLUSH_MS = 50;

/**
 * The default logger: JSON lines through pino (`{"level":"info","time":"<ISO>","msg":...,<fields>}`), written
 * to stdout asynchronously (pino's SonicBoom destination: lines gather up to 4 KiB or 50 ms, then go out in
 * one write; what is buffered is flushed when the process exits). Pass `write` to send the lines elsewhere
 * (synchronously, through that function).
 */
export class JsonLineLogger implements Logger {
  private readonly pino: pino.Logger;
  private readonly stdout: ReturnType<typeof pino.destination> | undefined;

  constructor(write?: (line: string) => void) {
    this.stdout = write
      ? undefined
      : pino.destination({
          dest: 1,
          sync: false,
          minLength: STDOUT_BATCH_BYTES,
          periodicFlush: STDOUT_FLUSH_MS,
        });
    const destination = write ? { write } : this.stdout;
    this.pino = pino(
      {
        level: 'debug',
        base: undefined,
        timestamp: isoTimeOncePerMs,
        formatters: { level: (label) => ({ level: label }) },
      },
      destination,
    );
  }

  log(level: LogLevel, msg: string, fields?: LogFields): void {
    // msg inside the object keeps it first on the line, right after level and time.
    this.pino[level](fields ? { msg, ...fields } : { msg });
  }

  flush(): void {
    try {
      this.stdout?.flushSync();
    } catch {
      // Not open yet, or stdout is gone: nothing more can be written.
    }
  }
}

let stampMs = Number.NaN;
let stamp = '';

/**
 * pino's `isoTime` field, formatted once per millisecond: at thousands of lines a second most lines share
 * their millisecond, and `toISOString` is a visible share of an access-log line.
 */
function isoTimeOncePerMs(): string {
  const now = Date.now();
  if (now !== stampMs) {
    stampMs = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

let shared: JsonLineLogger | undefined;

/** The process's default logger (one stdout destination however many apps are created). */
export function defaultLogger(): JsonLineLogger {
  shared ??= new JsonLineLogger();
  return shared;
}

/** Keeps records in memory (tests, embedding). */
export class MemoryLogger implements Logger {
  readonly records: Array<LogFields & { level: LogLevel; msg: string }> = [];

  log(level: LogLevel, msg: string, fields: LogFields = {}): void {
    this.records.push({ level, msg, ...fields });
  }
}

export const silentLogger: Logger = { log() {} };
