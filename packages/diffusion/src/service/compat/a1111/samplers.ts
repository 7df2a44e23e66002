import { UnprocessableEntity } from '@tiffin/core';
import { KARRAS_SCHEDULER_NAMES, SCHEDULER_NAMES } from '../../../schedulers/registry.js';

/**
 * A1111's samplers (its 1.9+ list, `modules/sd_samplers_*.py`) and the Tiffin scheduler each runs on. `scheduler`
 * is the Tiffin name; a sampler whose scheduler this package does not implement (absent from `SCHEDULER_NAMES`)
 * is "not yet": listed in the docs, refused with a 422 naming it and the served ones, never silently replaced.
 * `defaultSchedule` is the schedule type A1111's "Automatic" picks for the sampler.
 */
interface A1111Sampler {
  name: string;
  aliases: readonly string[];
  scheduler: string;
  defaultSchedule: ScheduleType;
  options: Readonly<Record<string, unknown>>;
}

/** A1111's schedule types (`modules/sd_schedulers.py`): name, label, and whether Tiffin serves it. */
export type ScheduleType =
  | 'automatic'
  | 'uniform'
  | 'karras'
  | 'exponential'
  | 'polyexponential'
  | 'sgm_uniform'
  | 'kl_optimal'
  | 'align_your_steps'
  | 'simple'
  | 'normal'
  | 'ddim'
  | 'beta';

export const SCHEDULE_TYPES: ReadonlyArray<{ name: ScheduleType; label: string; aliases: string[] | null }> =
  [
    { name: 'automatic', label: 'Automatic', aliases: null },
    { name: 'uniform', label: 'Uniform', aliases: null },
    { name: 'karras', label: 'Karras', aliases: null },
    { name: 'exponential', label: 'Exponential', aliases: null },
    { name: 'polyexponential', label: 'Polyexponential', aliases: null },
    { name: 'sgm_uniform', label: 'SGM Uniform', aliases: ['SGMUniform'] },
    { name: 'kl_optimal', label: 'KL Optimal', aliases: null },
    { name: 'align_your_steps', label: 'Align Your Steps', aliases: null },
    { name: 'simple', label: 'Simple', aliases: null },
    { name: 'normal', label: 'Normal', aliases: null },
    { name: 'ddim', label: 'DDIM', aliases: null },
    { name: 'beta', label: 'Beta', aliases: null },
  ];

/** The schedule types Tiffin runs: the scheduler's own sigmas, or Karras sigmas where the scheduler takes them. */
const KARRAS_SCHEDULERS: ReadonlySet<string> = new Set(KARRAS_SCHEDULER_NAMES);

const s = (
  name: string,
  aliases: string[],
  scheduler: string,
  defaultSchedule: ScheduleType = 'automatic',
  options: Record<string, unknown> = {},
): A1111Sampler => ({
  name,
  aliases,
  scheduler,
  defaultSchedule,
  options: defaultSchedule === 'automatic' ? options : { scheduler: defaultSchedule, ...options },
});

export const A1111_SAMPLER_LIST: readonly A1111Sampler[] = [
  s('DPM++ 2M', ['k_dpmpp_2m'], 'dpmpp_2m', 'karras'),
  s('DPM++ SDE', ['k_dpmpp_sde'], 'dpmpp_sde', 'karras', { second_order: true, brownian_noise: true }),
  s('DPM++ 2M SDE', ['k_dpmpp_2m_sde'], 'dpmpp_2m_sde', 'exponential', { brownian_noise: true }),
  s('DPM++ 2M SDE Heun', ['k_dpmpp_2m_sde_heun'], 'dpmpp_2m_sde_heun', 'exponential', {
    brownian_noise: true,
  }),
  s('DPM++ 2S a', ['k_dpmpp_2s_a'], 'dpmpp_2s_a', 'karras', { uses_ensd: true, second_order: true }),
  s('DPM++ 3M SDE', ['k_dpmpp_3m_sde'], 'dpmpp_3m_sde', 'exponential', { brownian_noise: true }),
  s('Euler a', ['k_euler_a', 'k_euler_ancestral'], 'euler_a', 'automatic', { uses_ensd: true }),
  s('Euler', ['k_euler'], 'euler'),
  s('LMS', ['k_lms'], 'lms'),
  s('Heun', ['k_heun'], 'heun', 'automatic', { second_order: true }),
  s('DPM2', ['k_dpm_2'], 'kdpm2', 'karras', { discard_next_to_last_sigma: true, second_order: true }),
  s('DPM2 a', ['k_dpm_2_a'], 'kdpm2_a', 'karras', { discard_next_to_last_sigma: true, uses_ensd: true }),
  s('DPM fast', ['k_dpm_fast'], 'dpm_fast', 'automatic', { uses_ensd: true }),
  s('DPM adaptive', ['k_dpm_ad'], 'dpm_adaptive', 'automatic', { uses_ensd: true }),
  s('Restart', ['restart'], 'restart', 'karras', { second_order: true }),
  s('DDIM', ['ddim'], 'ddim'),
  s('DDIM CFG++', ['ddim_cfgpp'], 'ddim_cfgpp'),
  s('PLMS', ['plms'], 'pndm'),
  s('UniPC', ['unipc'], 'unipc'),
  s('LCM', ['k_lcm'], 'lcm'),
];

/** Whether Tiffin implements the scheduler a sampler runs on. */
export function isServed(sampler: A1111Sampler): boolean {
  return (SCHEDULER_NAMES as readonly string[]).includes(sampler.scheduler);
}

/** The A1111 samplers this service runs, in A1111's order. */
export function servedSamplers(): A1111Sampler[] {
  return A1111_SAMPLER_LIST.filter(isServed);
}

/** Whether a schedule type runs on a scheduler: its own sigmas always, Karras on the schedulers that take them. */
function scheduleServed(type: ScheduleType, scheduler: string): boolean {
  return type === 'automatic' || (type === 'karras' && KARRAS_SCHEDULERS.has(scheduler));
}

/** A sampler and schedule type resolved to what the kind's body takes, and the names `info` reports. */
export interface ResolvedSampler {
  samplerName: string;
  /** The schedule type's label as A1111's infotext writes it (`Schedule type: Karras`). */
  scheduleLabel: string;
  scheduler: string;
  /** Karras sigmas on or off; null for a scheduler that takes no choice (its own sigmas only). */
  karras: boolean | null;
}

const lower = (text: string) => text.toLowerCase();
const label = (type: ScheduleType) => SCHEDULE_TYPES.find((t) => t.name === type)?.label ?? 'Automatic';

function scheduleTypeOf(value: string): ScheduleType | undefined {
  const v = lower(value);
  return SCHEDULE_TYPES.find(
    (t) => lower(t.name) === v || lower(t.label) === v || t.aliases?.some((a) => lower(a) === v),
  )?.name;
}

function findSampler(name: string): A1111Sampler | undefined {
  const n = lower(name);
  return A1111_SAMPLER_LIST.find((x) => lower(x.name) === n || x.aliases.some((a) => lower(a) === n));
}

/** A 422 naming what was asked and what this service runs instead. */
function notServed(what: string, detail: Record<string, unknown>): UnprocessableEntity {
  const served = servedSamplers().map((x) => x.name);
  return new UnprocessableEntity(
    `${what} is not served by this service (yet); the samplers it runs: ${served.join(', ')}, with schedule type Automatic or Karras (Karras on ${[
      ...KARRAS_SCHEDULERS,
    ]
      .map((k) => A1111_SAMPLER_LIST.find((x) => x.scheduler === k)?.name)
      .filter(Boolean)
      .join(', ')})`,
    { code: 'SAMPLER_NOT_SERVED', detail: { ...detail, served } },
  );
}

/**
 * A1111's `sampler_name` (or `sampler_index`) and `scheduler` as Tiffin runs them, in both of A1111's forms: 1.9+
 * (`sampler_name: "DPM++ 2M"`, `scheduler: "Karras"`) and the older one with the schedule in the name
 * (`DPM++ 2M Karras`); aliases (`k_dpmpp_2m`) as A1111 takes them. "Automatic" (or none) is the sampler's own
 * default schedule, as in A1111 1.9+. Undefined when the request names no sampler (the model's default runs).
 */
export function resolveSampler(samplerName: string, scheduleName: string): ResolvedSampler | undefined {
  if (!samplerName && !scheduleName) return undefined;
  let name = samplerName || 'Euler a';
  let type = scheduleName ? scheduleTypeOf(scheduleName) : 'automatic';
  if (!type)
    throw notServed(`scheduler ${JSON.stringify(scheduleName.slice(0, 64))}`, {
      scheduler: scheduleName.slice(0, 64),
    });
  let sampler = findSampler(name);
  if (!sampler) {
    // The older form: the schedule type's label (or alias) ends the sampler's name.
    for (const t of SCHEDULE_TYPES) {
      const suffix = [t.label, ...(t.aliases ?? [])].find((l) => lower(name).endsWith(` ${lower(l)}`));
      if (!suffix) continue;
      const base = findSampler(name.slice(0, -(suffix.length + 1)));
      if (base) {
        sampler = base;
        type = t.name;
        name = base.name;
      }
      break;
    }
  }
  const asked = { sampler: samplerName.slice(0, 64), scheduler: scheduleName.slice(0, 64) || null };
  if (!sampler) throw notServed(`sampler ${JSON.stringify(samplerName.slice(0, 64))}`, asked);
  if (!isServed(sampler)) throw notServed(`sampler ${JSON.stringify(sampler.name)}`, asked);
  // Automatic: the sampler's own default schedule where this service runs it, else the scheduler's own sigmas.
  const effective =
    type !== 'automatic'
      ? type
      : scheduleServed(sampler.defaultSchedule, sampler.scheduler)
        ? sampler.defaultSchedule
        : 'automatic';
  if (!scheduleServed(effective, sampler.scheduler))
    throw notServed(`sampler ${JSON.stringify(sampler.name)} with schedule type ${label(effective)}`, asked);
  return {
    samplerName: sampler.name,
    scheduleLabel: label(effective),
    scheduler: sampler.scheduler,
    karras: KARRAS_SCHEDULERS.has(sampler.scheduler) ? effective === 'karras' : null,
  };
}

/** The A1111 name of a Tiffin scheduler (for `info` when the request named none). */
export function samplerNameOf(scheduler: string | null): string {
  return A1111_SAMPLER_LIST.find((x) => x.scheduler === scheduler)?.name ?? scheduler ?? 'default';
}

/** The samplers A1111 1.x listed with Karras in their name (before 1.9 made the schedule a field of its own). */
const OLD_KARRAS_NAMES: ReadonlySet<string> = new Set([
  'LMS',
  'DPM2',
  'DPM2 a',
  'DPM++ 2S a',
  'DPM++ 2M',
  'DPM++ SDE',
  'DPM++ 2M SDE',
  'DPM++ 3M SDE',
]);

/**
 * `GET /sdapi/v1/samplers`: the served samplers as A1111 1.9+ lists them (`name`, `aliases`, `options`), then the
 * older `… Karras` names of those that run Karras sigmas, for clients written before 1.9.
 */
export function samplerListing(): Array<{
  name: string;
  aliases: string[];
  options: Record<string, unknown>;
}> {
  const served = servedSamplers();
  const current = served.map((x) => ({ name: x.name, aliases: [...x.aliases], options: { ...x.options } }));
  const old = served
    .filter((x) => OLD_KARRAS_NAMES.has(x.name) && KARRAS_SCHEDULERS.has(x.scheduler))
    .map((x) => ({
      name: `${x.name} Karras`,
      aliases: x.aliases.map((a) => `${a}_ka`),
      options: { ...x.options, scheduler: 'karras' },
    }));
  return [...current, ...old];
}

/** `GET /sdapi/v1/schedulers`: the schedule types this service runs, as A1111 lists them. */
export function scheduleListing(): Array<Record<string, unknown>> {
  return SCHEDULE_TYPES.filter((t) => t.name === 'automatic' || t.name === 'karras').map((t) => ({
    name: t.name,
    label: t.label,
    aliases: t.aliases,
    default_rho: t.name === 'karras' ? 7 : -1,
    need_inner_model: false,
  }));
}
