import pino from 'pino';

/** Structured logging: one JSON object per line, each with time, level and message. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type LogFields = Record<string, unknown>;

/** The fields of the access-log line the server writes for every request (`"msg":"request"`). */
export interface AccessLogEntry {
  requestId: string;
  method: string;
  path: string;
  status: number;
  requestType?: string | undefined;
  requestLength?: string | undefined;
  responseType?: string | undefined;
  /** Milliseconds from the request's arrival to its answer being ready (the server writes them to the microsecond). */
  ms: number;
  /** The request's trace id, when the server traces (docs/observability.md). */
  traceId?: string | undefined;
}

export interface Logger {
  log(level: LogLevel, msg: string, fields?: LogFields): void;
  /**
   * Write the access-log line of one request. Optional: without it the server calls
   * `log('info', 'request', entry)`, which gives the same record.
   */
  access?(entry: AccessLogEntry): void;
  /** Write out anything buffered, synchronously (before the process exits or may be killed). */
  flush?(): void;
}

/**
 * The default logger: JSON lines through pino (`{"level":"info","time":"<ISO>","msg":...,<fields>}`), written
 * to stdout in batches: lines gather for up to 4 KiB or 50 ms, then pino's SonicBoom destination writes them
 * with one synchronous write (a reader that stops reading holds the process up instead of lines piling up in
 * memory). What is held is written when the process exits or `flush()` is called.
 * Pass `write` to send the lines elsewhere (synchronously, through that function).
 */
export class JsonLineLogger implements Logger {
  private readonly pino: pino.Logger;
  private readonly stdout: LineBatch | undefined;
  private readonly destination: { write(line: string): void };

  constructor(write?: (line: string) => void) {
    this.stdout = write ? undefined : new LineBatch(pino.destination({ dest: 1, sync: true }));
    const destination = write ? { write } : this.stdout!;
    this.destination = destination;
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

  /**
   * The access-log line, written out directly: the same JSON line pino writes for
   * `log('info', 'request', entry)` (keys in that order, absent fields left out), at a third of pino's cost
   * per request, because its keys are known in advance.
   */
  access(entry: AccessLogEntry): void {
    let line = `{"level":"info"${isoTimeOncePerMs()},"msg":"request","requestId":${jsonString(entry.requestId)},"method":${jsonString(entry.method)},"path":${jsonString(entry.path)},"status":${entry.status}`;
    if (entry.requestType !== undefined) line += `,"requestType":${jsonString(entry.requestType)}`;
    if (entry.requestLength !== undefined) line += `,"requestLength":${jsonString(entry.requestLength)}`;
    if (entry.responseType !== undefined) line += `,"responseType":${jsonString(entry.responseType)}`;
    if (entry.traceId !== undefined) line += `,"ms":${entry.ms},"traceId":"${entry.traceId}"`;
    else line += `,"ms":${entry.ms}`;
    this.destination.write(`${line}}\n`);
  }

  flush(): void {
    this.stdout?.flushSync();
  }
}

/** Printable ASCII without `"` and `\\`: such a string is its own JSON text between quotes. */
const PLAIN_JSON_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A string as JSON text; JSON.stringify only for the rare string that needs escapes (client-sent headers). */
function jsonString(value: string): string {
  return PLAIN_JSON_TEXT.test(value) ? `"${value}"` : JSON.stringify(value);
}

/** Lines gather up to about this many characters before one write to stdout... */
const BATCH_CHARS = 4096;
/** ...or for at most this many milliseconds, so a quiet server's lines still show at once to a reader. */
const BATCH_MS = 50;

/**
 * Gathers log lines and hands them to SonicBoom as one string once 4 KiB or 50 ms have gathered: one write
 * syscall per batch instead of one per access-log line. (SonicBoom's own asynchronous buffering measures its
 * whole pending buffer on every write, and a write still in flight is lost when the process is killed.)
 */
class LineBatch {
  private lines: string[] = [];
  private chars = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly sonic: ReturnType<typeof pino.destination>) {
    process.once('exit', () => this.flushSync());
  }

  write(line: string): void {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= BATCH_CHARS) this.pass();
    else if (!this.timer) {
      this.timer = setTimeout(this.pass, BATCH_MS);
      // The exit handler writes what is left: the timer alone must not keep the process alive.
      this.timer.unref();
    }
  }

  private readonly pass = (): void => {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.lines.length === 0) return;
    const text = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    this.chars = 0;
    this.sonic.write(text);
  };

  flushSync(): void {
    this.pass();
    try {
      this.sonic.flushSync();
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
