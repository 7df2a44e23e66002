/** A1111 sampler names and the Tiffin scheduler (with Karras sigmas or not) each maps to. */
export const A1111_SAMPLERS: Readonly<Record<string, { scheduler: string; karras: boolean }>> = {
  'Euler a': { scheduler: 'euler_a', karras: false },
  Euler: { scheduler: 'euler', karras: false },
  'DPM++ 2M': { scheduler: 'dpmpp_2m', karras: false },
  'DPM++ 2M Karras': { scheduler: 'dpmpp_2m', karras: true },
  LCM: { scheduler: 'lcm', karras: false },
  DDIM: { scheduler: 'ddim', karras: false },
  PLMS: { scheduler: 'pndm', karras: false },
};

/** The A1111 name of a Tiffin scheduler (for `info` when the request named none). */
export function samplerNameOf(scheduler: string | null): string {
  for (const [name, s] of Object.entries(A1111_SAMPLERS))
    if (s.scheduler === scheduler && !s.karras) return name;
  return scheduler ?? 'default';
}
