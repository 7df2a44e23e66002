import { createHmac } from 'node:crypto';
import { BadInput } from '../errors/index.js';
import type { Logger } from '../logging/logger.js';
import type { TaskView } from '../tasks/task-store.js';

/** The submit request header that names the URL told when the task ends (kept with the stored task). */
export const WEBHOOK_URL_HEADER = 'tiffin-webhook-url';

/** Longest webhook URL accepted: longer ones are refused before they are parsed. */
const MAX_URL_LENGTH = 2048;

/** Where task webhooks may go and how they are signed and retried (`tiffin serve --webhook-allow ...`). */
export interface WebhookOptions {
  /**
   * `host[:port]` a webhook may be sent to; without a port, the scheme's default (http 80, https 443). None:
   * every URL is refused.
   */
  allow: readonly string[];
  /** The shared secret, `whsec_<base64>` (default `$TIFFIN_WEBHOOK_SECRET`): deliveries are signed with it. */
  secret?: string;
  /** Deliveries of one webhook before it is given up (default 5). */
  attempts?: number;
  /** Milliseconds before the second delivery, doubled before each next one (default 1000). */
  retryMs?: number;
  /** Milliseconds one delivery may take (default 10 000). */
  timeoutMs?: number;
}

/**
 * Tells a task's webhook URL that the task ended: a POST of a Standard Webhooks message (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`), retried with
 * exponential backoff while the receiver fails (not 2xx, unreachable, too slow), at most `attempts` times.
 * Only hosts in `allow` are called, no redirect is followed, and each delivery has a timeout, so a client
 * cannot turn the server against the network it stands in.
 */
export class TaskWebhooks {
  private readonly allowed: ReadonlySet<string>;
  private readonly key: Buffer | null;
  private readonly attempts: number;
  private readonly retryMs: number;
  private readonly timeoutMs: number;

  constructor(
    options: WebhookOptions | undefined,
    private readonly logger: Logger,
  ) {
    this.allowed = new Set((options?.allow ?? []).map(allowEntry));
    const secret = options?.secret ?? process.env.TIFFIN_WEBHOOK_SECRET;
    this.key = secret ? secretKey(secret) : null;
    this.attempts = Math.max(1, options?.attempts ?? 5);
    this.retryMs = Math.max(1, options?.retryMs ?? 1000);
    this.timeoutMs = Math.max(1, options?.timeoutMs ?? 10_000);
  }

  /** The webhook URL a submit names, checked: 400 `WEBHOOK_URL_REFUSED` unless it may be called. */
  check(raw: string): URL {
    const refuse = (why: string) => new BadInput(`The webhook URL ${why}`, { code: 'WEBHOOK_URL_REFUSED' });
    if (raw.length > MAX_URL_LENGTH) throw refuse(`is longer than ${MAX_URL_LENGTH} characters`);
    if (this.allowed.size === 0) throw refuse('is refused: this server calls no webhooks (--webhook-allow)');
    if (!this.key) throw refuse('is refused: this server has no webhook secret to sign with');
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw refuse('is not a URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse('is not http or https');
    if (url.username || url.password) throw refuse('carries credentials');
    // The parser's host (lower case, IPv4 forms such as 0x7f.1 written out, IPv6 compressed, the default port
    // dropped) against the allowed entries parsed the same way.
    if (!this.allowed.has(hostPort(url)))
      throw refuse('names a host this server does not call (--webhook-allow)');
    return url;
  }

  /** POST the task's end to `url` in the background (retried as above); never throws. */
  deliver(url: string, view: TaskView, route: string): void {
    void this.send(url, view, route).catch((err) =>
      this.logger.log('warn', 'task webhook failed', {
        taskId: view.id,
        error: err instanceof Error ? err.message : String(err),
      }),
    );
  }

  private async send(raw: string, view: TaskView, route: string): Promise<void> {
    const url = this.check(raw);
    const key = this.key as Buffer;
    // One id per task: a receiver that sees it twice (a retry after a lost answer) knows it is the same.
    const id = `msg_${view.id}`;
    const body = JSON.stringify({
      type: `task.${view.status}`,
      timestamp: new Date().toISOString(),
      data: {
        id: view.id,
        api: view.api,
        status: view.status,
        error: view.error,
        finished_at: view.finished_at,
        expires_at: view.expires_at,
        result_url: view.status === 'succeeded' ? `${route}/get?id=${encodeURIComponent(view.id)}` : null,
      },
    });
    for (let attempt = 1; ; attempt++) {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
      let outcome: string;
      try {
        const response = await fetch(url, {
          method: 'POST',
          body,
          redirect: 'manual',
          signal: AbortSignal.timeout(this.timeoutMs),
          headers: {
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': timestamp,
            'webhook-signature': `v1,${signature}`,
          },
        });
        await response.body?.cancel().catch(() => {});
        if (response.status >= 200 && response.status < 300) return;
        outcome = `answered ${response.status}`;
      } catch (err) {
        outcome = err instanceof Error ? err.name : 'unreachable';
      }
      if (attempt >= this.attempts) throw new Error(`gave up after ${attempt} deliveries (${outcome})`);
      await new Promise((resolve) => setTimeout(resolve, this.retryMs * 2 ** (attempt - 1)).unref());
    }
  }
}

/** `host[:port]` as the URL parser writes a URL's host, for comparison. */
function allowEntry(entry: string): string {
  try {
    return hostPort(new URL(`http://${entry}`));
  } catch {
    throw new Error(`--webhook-allow ${entry}: give host[:port]`);
  }
}

/** Host and port, the port empty when it is the scheme's default (an entry without one allows 80 and 443). */
function hostPort(url: URL): string {
  return `${url.hostname}:${url.port}`;
}

/** The key of a `whsec_<base64>` secret (Standard Webhooks' format); another string is used as it is. */
function secretKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret);
}
