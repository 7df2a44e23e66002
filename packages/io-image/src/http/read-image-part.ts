import { BadInput, type HttpRequest } from '@tiffin/core';
import { mediaTypeMatches } from '@tiffin/core/descriptor';

/** True when `contentType` is one of `allowed` (parsed media types, docs/spec/io-descriptors.md D2; `image/*` patterns work). */
export function isAllowedMediaType(
  contentType: string | null | undefined,
  allowed: readonly string[],
): boolean {
  if (!contentType) return false;
  return allowed.some((pattern) => mediaTypeMatches(contentType, pattern));
}

/**
 * The image bytes of a request (docs/spec/io-descriptors.md §7.3 steps 1–3 with D1/D2/D10): a `multipart/form-data` body's first
 * file part whose Content-Type is allowed (plain fields are skipped), or a raw body whose Content-Type is
 * allowed. Every mismatch is the client's: BadInput.
 */
export async function readImagePart(request: HttpRequest, allowed: readonly string[]): Promise<Buffer> {
  const allowedList = allowed.join(', ');
  const contentType = request.contentType;
  if (!contentType) {
    const raw = request.headers.get('content-type');
    throw new BadInput(
      raw
        ? `Invalid Content-Type header '${raw}'; expected multipart/form-data or one of: ${allowedList}`
        : `Missing Content-Type header; expected multipart/form-data or one of: ${allowedList}`,
    );
  }
  if (contentType.essence === 'multipart/form-data') {
    const parts = await request.formData();
    const seen: string[] = [];
    for (const part of parts) {
      if (!part.isFile) continue; // docs/spec/io-descriptors.md D10: plain fields before the image part are skipped.
      const partType = part.headers.get('content-type');
      if (isAllowedMediaType(partType, allowed)) return part.data;
      seen.push(partType ?? '(none)');
    }
    if (seen.length === 0) throw new BadInput('no image file found in multipart form');
    throw new BadInput(
      `no multipart image file (allowed mime types are: ${allowedList}), got files with content types ${seen.join(', ')}`,
    );
  }
  if (!isAllowedMediaType(contentType.essence, allowed)) {
    throw new BadInput(
      `mime type ${contentType.essence} is not allowed, allowed mime types are: ${allowedList}`,
    );
  }
  return request.body();
}
