/**
 * The `--webhook-allow` entries (docs/tasks.md, Webhooks): `host[:port]` allows any path and query on that host
 * and port; `host[:port]/path` allows only the paths that are `/path` or go on under it by whole segments
 * (`/path/...`), with no query; a trailing `?` (`host/path/?`) allows a query there too.
 */
export class WebhookAllowList {
  /** The rules of each allowed `host:port` (the port empty for the scheme's default), as `hostPort` writes it. */
  private readonly rules = new Map<string, PathRule[]>();

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const { host, rule } = parseEntry(entry);
      const rules = this.rules.get(host);
      if (rules) rules.push(rule);
      else this.rules.set(host, [rule]);
    }
  }

  /** Whether no entry was given (every webhook URL is then refused). */
  get empty(): boolean {
    return this.rules.size === 0;
  }

  /** Why `url` (parsed, http or https) may not be called, or undefined when an entry allows it. */
  refusal(url: URL): string | undefined {
    // The parser's host (lower case, IPv4 forms such as 0x7f.1 written out, IPv6 compressed, the default port
    // dropped) against the allowed entries parsed the same way.
    const rules = this.rules.get(hostPort(url));
    if (!rules) return 'names a host this server does not call (--webhook-allow)';
    if (!rules.some((rule) => allows(rule, url)))
      return 'names a path this server does not call on that host (--webhook-allow)';
    return undefined;
  }
}

/** What one entry allows on its host: any path (`path` null), or `path` and below it; a query or not. */
interface PathRule {
  path: string | null;
  query: boolean;
}

/**
 * Characters a path of an entry may hold, segment by segment: unreserved and sub-delimiters but `;`, no `%`
 * (so an entry means one path, whatever a receiver decodes).
 */
const SEGMENT = /^[A-Za-z0-9\-._~!$&'()*+,=:@]+$/;

/**
 * In a URL's path (as parsed: dot segments are already resolved), what receivers read differently: an encoded
 * `/`, `\` or `.`, and `;` (path parameters, `..;`).
 */
const AMBIGUOUS = /%2f|%5c|%2e|;/i;

function allows(rule: PathRule, url: URL): boolean {
  if (rule.path === null) return true;
  const path = url.pathname;
  if (AMBIGUOUS.test(path)) return false;
  const under = rule.path.endsWith('/') ? rule.path : `${rule.path}/`;
  if (path !== rule.path && !path.startsWith(under)) return false;
  return rule.query || !hasQuery(url);
}

/** Whether the URL sent carries a query, an empty one (`/hook?`) too; the fragment is never sent. */
function hasQuery(url: URL): boolean {
  if (url.search !== '') return true;
  const sent = new URL(url.href);
  sent.hash = '';
  return sent.href.endsWith('?');
}

/** One entry, `host[:port][/path][?]`, read strictly: anything else stops the server at start. */
function parseEntry(entry: string): { host: string; rule: PathRule } {
  const bad = () =>
    new Error(`--webhook-allow ${entry}: give host[:port], host[:port]/path or host[:port]/path?`);
  const slash = entry.indexOf('/');
  const hostPart = slash < 0 ? entry : entry.slice(0, slash);
  if (hostPart === '' || hostPart.endsWith(':') || /[?#@\\\s]/.test(hostPart)) throw bad();
  let url: URL;
  try {
    url = new URL(`http://${hostPart}`);
  } catch {
    throw bad();
  }
  const host = hostPort(url);
  if (slash < 0) return { host, rule: { path: null, query: true } };
  const query = entry.endsWith('?');
  const path = entry.slice(slash, query ? -1 : undefined);
  const segments = path.slice(1).split('/');
  // A trailing `/` leaves one empty segment at the end; any other empty segment, `.` or `..` is refused.
  if (segments.at(-1) === '' && segments.length > 1) segments.pop();
  if (path !== '/' && !segments.every((s) => SEGMENT.test(s) && s !== '.' && s !== '..')) throw bad();
  return { host, rule: { path, query } };
}

/** Host and port, the port empty when it is the scheme's default (an entry without one allows 80 and 443). */
export function hostPort(url: URL): string {
  return `${url.hostname}:${url.port}`;
}
