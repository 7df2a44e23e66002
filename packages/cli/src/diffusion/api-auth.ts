import { CLIException } from '@tiffin/core/internal';

/**
 * `--api-auth user:pass[,user:pass]`, as AUTOMATIC1111 takes it: the HTTP Basic users of the A1111 routes. A pair
 * splits at its first colon (a user name has none, RFC 7617 §2; a password may); no pair may be empty or lack
 * its user. The message never repeats the value (a secret), which is why the action parses it, not commander (whose
 * error quotes the argument).
 */
export function parseApiAuth(value: string): string[] {
  const pairs = value.split(',').map((p) => p.trim());
  for (const pair of pairs) {
    if (pair.indexOf(':') <= 0)
      throw new CLIException('--api-auth takes user:pass[,user:pass] (each with a user name and a colon)');
  }
  return pairs;
}

export const API_AUTH_HELP =
  "AUTOMATIC1111's --api-auth: HTTP Basic users of /sdapi/v1/* (user:pass[,user:pass]); the API token opens them too; default $TIFFIN_A1111_API_AUTH";
