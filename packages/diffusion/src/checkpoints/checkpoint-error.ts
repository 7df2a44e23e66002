import { basename, extname } from 'node:path';
import { InvalidArgument } from '@tiffin/core';

/** A checkpoint that cannot be used: a pickle (`code` PICKLE_REFUSED) or not an SD 1.x/2.x/XL file (BAD_CHECKPOINT). */
export class SingleFileError extends InvalidArgument {
  static override readonly code: string = 'BAD_CHECKPOINT';
}

/** `.ckpt`/`.pt`/`.pth`/`.bin` are Python pickles: unpickling runs code the file names. */
export function assertNotPickle(path: string): void {
  const ext = extname(path).toLowerCase();
  if (['.ckpt', '.pt', '.pth', '.bin'].includes(ext))
    throw new SingleFileError(
      `${basename(path)} is a Python pickle (${ext}): loading one executes code stored in the file, so Tiffin never ` +
        'opens it. Use the .safetensors version of the checkpoint (most hubs offer one), or convert it once in a sandbox.',
      { code: 'PICKLE_REFUSED' },
    );
}
