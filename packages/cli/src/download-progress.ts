import type { DownloadProgress } from '@tiffin/diffusion';

const WIDTH = 30;

function size(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024).toFixed(0)} KiB`;
}

/**
 * A download progress bar on stderr (stdout stays clean for scripts): redrawn in place on a terminal at
 * most every 100 ms, one line per finished file otherwise.
 */
export function downloadProgressBar(stream: NodeJS.WriteStream = process.stderr): {
  update: (p: DownloadProgress) => void;
  finish: () => void;
} {
  let last = 0;
  let lastFile = '';
  let drawn = false;
  return {
    update(p) {
      if (!stream.isTTY) {
        if (p.fileBytes === p.fileTotal && p.file !== lastFile) {
          lastFile = p.file;
          stream.write(`downloaded ${p.file} (${size(p.fileTotal)}), ${size(p.bytes)} of ${size(p.total)}\n`);
        }
        return;
      }
      const now = Date.now();
      if (now - last < 100 && p.bytes !== p.total) return;
      last = now;
      const ratio = p.total > 0 ? p.bytes / p.total : 1;
      const filled = Math.round(ratio * WIDTH);
      stream.write(
        `\r[${'#'.repeat(filled)}${' '.repeat(WIDTH - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}% ${size(p.bytes)} / ${size(p.total)} ${p.file}\x1b[K`,
      );
      drawn = true;
    },
    finish() {
      if (drawn) stream.write('\n');
    },
  };
}
