import { createHmac } from 'node:crypto';
import { BadInput } from '../errors/index.js';
import type { Logger } from '../logging/logger.js';
import type { TaskView } from '../tasks/task-store.js';
import { hostPort, WebhookAllowList } from './webhook-allow-list.js';
import { postOnce } from './webhook-post.js';
import { WebhookSlots } from './webhook-slots.js';

/** The submit request header that names the URL told when the task ends (kept with the stored task). */
export const WEBHOOK_URL_HEADER = 'tiffin-webhook-url';

/** Longest webhook URL accepted: longer ones are refused before they are parsed. */
const MAX_URL_LENGTH = 2048;

/** Where task webhooks may go and how they are signed and retried (`tiffin serve --webhook-allow ...`). */
export interface WebhookOptions {
  /**
   * Where a webhook may be sent: `host[:port]` (any path and query there; without a port, the scheme's default,
   * http 80 or https 443), `host[:port]/path` (only `/path` and the paths under it, whole segments, without a
   * query) or `host[:port]/path?` (a query too). None: every URL is refused.
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
  /** Deliveries in flight at once, to every host together (default 16); more wait their turn. */
  maxInFlight?: number;
  /** Deliveries in flight at once to one `host:port` (default 4); more wait their turn. */
  maxPerHost?: number;
  /**
   * Deliveries waiting at once, for a slot or for their next retry (default 1024): a delivery that finds
   * them all taken is dropped, with a warn log line `task webhook dropped`.
   */
  maxQueued?: number;
}

/**
 * Tells a task's webhook URL that the task ended: a POST of a Standard Webhooks message (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`), retried with
 * exponential backoff while the receiver fails (not 2xx, unreachable, too slow), at most `attempts` times.
 * Only hosts and paths in `allow` are called, no redirect is followed, and each delivery has a timeout, so a
 * client cannot turn the server against the network it stands in; deliveries in flight are bounded, in all and
 * per host, and those waiting too (`WebhookSlots`), so many tasks cannot make it a flood either.
 */
export class TaskWebhooks {
  private readonly allowed: WebhookAllowList;
  private readonly slots: WebhookSlots;
  private readonly key: Buffer | null;
  private readonly attempts: number;
  private readonly retryMs: number;
  private readonly timeoutMs: number;

  constructor(
    options: WebhookOptions | undefined,
    private readonly logger: Logger,
  ) {
    this.allowed = new WebhookAllowList(options?.allow ?? []);
    const secret = options?.secret ?? process.env.TIFFIN_WEBHOOK_SECRET;
    this.key = secret ? secretKey(secret) : null;
    this.attempts = Math.max(1, options?.attempts ?? 5);
    this.retryMs = Math.max(1, options?.retryMs ?? 1000);
    this.timeoutMs = Math.max(1, options?.timeoutMs ?? 10_000);
    this.slots = new WebhookSlots({
      maxInFlight: Math.max(1, options?.maxInFlight ?? 16),
      maxPerHost: Math.max(1, options?.maxPerHost ?? 4),
      maxQueued: Math.max(0, options?.maxQueued ?? 1024),
    });
  }

  /** The webhook URL a submit names, checked: 400 `WEBHOOK_URL_REFUSED` unless it may be called. */
  check(raw: string): URL {
    const refuse = (why: string) => new BadInput(`The webhook URL ${why}`, { code: 'WEBHOOK_URL_REFUSED' });
    if (raw.length > MAX_URL_LENGTH) throw refuse(`is longer than ${MAX_URL_LENGTH} characters`);
    if (this.allowed.empty) throw refuse('is refused: this server calls no webhooks (--webhook-allow)');
    if (!this.key) throw refuse('is refused: this server has no webhook secret to sign with');
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw refuse('is not a URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse('is not http or https');
    if (url.username || url.password) throw refuse('carries credentials');
    const refusal = this.allowed.refusal(url);
    if (refusal) throw refuse(refusal);
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
    const host = hostPort(url);
    let slot = this.slots.start(host);
    for (let attempt = 1; ; attempt++) {
      if (!slot) {
        this.logger.log('warn', 'task webhook dropped', {
          taskId: view.id,
          host,
          attempt,
          reason: 'too many webhook deliveries wait already (maxQueued)',
        });
        return;
      }
      await slot;
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
      let outcome: string;
      try {
        const headers = {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': timestamp,
          'webhook-signature': `v1,${signature}`,
        };
        const status = await postOnce(url, body, headers, this.timeoutMs);
        if (status >= 200 && status < 300) return;
        outcome = `answered ${status}`;
      } catch (err) {
        outcome = err instanceof Error ? err.name : 'unreachable';
      } finally {
        this.slots.release(host);
      }
      if (attempt >= this.attempts) throw new Error(`gave up after ${attempt} deliveries (${outcome})`);
      slot = this.slots.retry(host, this.retryMs * 2 ** (attempt - 1));
    }
  }
}

/** The key of a `whsec_<base64>` secret (Standard Webhooks' format); another string is used as it is. */
function secretKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret);
}
