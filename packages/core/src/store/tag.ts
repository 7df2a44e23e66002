import { InvalidArgument } from '../errors/index.js';

/** A store reference: `name:version`, where version may be `latest` (the newest entry of that name). */
export interface Tag {
  readonly name: string;
  readonly version: string;
}

export const LATEST = 'latest';

const NAME = /^[a-z0-9](?:[a-z0-9._-]{0,61}[a-z0-9])?$/;
const VERSION = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,126}[A-Za-z0-9])?$/;

export function assertValidName(name: string, what = 'name'): void {
  if (!NAME.test(name)) {
    throw new InvalidArgument(
      `Invalid ${what} '${name}': use 1-63 characters of a-z, 0-9, '.', '_' or '-', starting and ending with a letter or digit`,
    );
  }
}

export function assertValidVersion(version: string): void {
  if (!VERSION.test(version)) {
    throw new InvalidArgument(
      `Invalid version '${version}': use 1-128 characters of letters, digits, '.', '_' or '-', starting and ending with a letter or digit`,
    );
  }
}

/** Parse `name[:version]`; a missing version means `latest`. */
export function parseTag(text: string): Tag {
  const colon = text.indexOf(':');
  const name = (colon < 0 ? text : text.slice(0, colon)).toLowerCase();
  const version = colon < 0 ? LATEST : text.slice(colon + 1);
  assertValidName(name);
  if (version !== LATEST) assertValidVersion(version);
  return { name, version };
}

export function formatTag(tag: Tag): string {
  return `${tag.name}:${tag.version}`;
}
