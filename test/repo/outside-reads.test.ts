// outside-reads: ignore-file (its inputs are outside paths on purpose)
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findOutsideReads, scanRepository } from './outside-reads.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const TEST = 'packages/diffusion/test/helpers/fixtures.ts';
const PKG = 'packages/diffusion';

function rules(file: string, text: string, checkout?: string): string[] {
  return findOutsideReads(file, file.startsWith('packages/') ? PKG : '.', text, checkout).map((f) => f.rule);
}

// The scanner is itself tested on the shapes an outside read takes, so that a pass on the repository
// means "none of these", not "the one grep string did not match".
describe('outside-read scanner', () => {
  it.each([
    ["new URL('../../../../../outside/fixtures/sd-reference', import.meta.url)", 'URL climbing five levels'],
    ["join(here, '..', '..', '..', '..', '..', 'shared')", 'path segments as separate arguments'],
    ["resolve(__dirname, '../../../..', '../x.json')", 'two climbing arguments that escape together'],
    [
      "readFileSync('../../../outside/x.json')",
      'a path read from the working directory (the package folder)',
    ],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the input is source text with a template
    ['readFileSync(`${here}/../../../../../outside/a.json`)', 'a template after an expression'],
    ["const dir = process.env.SD_FIXTURES ?? '../../../../../outside'", 'an env fallback'],
  ])('flags %s (%s)', (code) => {
    expect(rules(TEST, code)).toContain('climbs-out');
  });

  it.each([
    [`readFileSync('${['', 'work', 'outside', 'spec', 'server.md'].join('/')}')`, 'ts'],
    ["const p = process.env.REF ?? '/home/alice/fixtures'", 'ts'],
    ["new URL('file:///Users/bob/x.json')", 'ts'],
    ["'C:\\\\Users\\\\bob\\\\x.json'", 'ts'],
  ])('flags the machine path in %s', (code) => {
    expect(rules(TEST, code)).toContain('machine-path');
  });

  it('flags machine paths and climbs in JSON, YAML and shell files', () => {
    expect(rules('packages/diffusion/scripts/x.sh', 'cat /home/me/ref.json')).toEqual(['machine-path']);
    expect(rules('packages/diffusion/test/cfg.json', '{"dir": "../../../../outside"}')).toEqual([
      'climbs-out',
    ]);
    expect(rules('.ci/config.yaml', 'path: ../../outside/fixtures')).toEqual(['climbs-out']);
  });

  it('flags the home directory in tests and the checkout path anywhere', () => {
    expect(rules(TEST, "join(homedir(), '.cache', 'sd')")).toEqual(['home-in-test']);
    expect(rules(TEST, 'const h = process.env.HOME')).toEqual(['home-in-test']);
    expect(rules('packages/core/src/a.ts', '// built in /x/checkout/packages', '/x/checkout')).toEqual([
      'checkout-path',
    ]);
  });

  it('leaves paths inside the repository, temp dirs and system files alone', () => {
    const inside = [
      "new URL('../fixtures/sd-reference', import.meta.url)",
      "new URL('../../..', import.meta.url)",
      "join(CLI_DIR, '..', '..')",
      "import svc from '../../../examples/quickstart/service.js'",
      "const m = await import('../../../examples/quickstart/service.js')",
      "join(HERE, '..', '..', '..', 'docs', 'clients.md')",
      "lora_weights: '/srv/secret'",
      "join(tmpdir(), 'tiffin-')",
      "spawn('/usr/bin/env', ['node'])",
      "readFileSync('/proc/self/status')",
      "const home = process.env.HOME ?? ''",
      "'a/work/b'",
    ];
    expect(findOutsideReads('packages/diffusion/src/x.ts', PKG, inside.join('\n'))).toEqual([]);
    expect(
      rules('scripts/x.sh', 'ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$R/usr/local/bin/npm"'),
    ).toEqual([]);
  });
});

describe('the repository', () => {
  it('reads nothing outside its root (no climbing paths, machine paths or home dirs in tests)', () => {
    const { files, findings } = scanRepository(ROOT);
    expect(files).toBeGreaterThan(100);
    expect(findings).toEqual([]);
  }, 120_000);
});
