export { decodeBmp, encodeBmp, readBmpHeader } from './codec/bmp.js';
export { type FileTypeImporter, type SniffedType, sniffMimeType } from './codec/mime-detection.js';
export { DEFAULT_MAX_PIXELS } from './decode/limits.js';
export { type FormatInfo, type ImageFormat, SUPPORTED_MIME_TYPES } from './formats.js';
export { Image, type ImageOptions, type ImageOutput } from './image-descriptor.js';
export { MODE_INFO, type ModeInfo, PIL_MODES, type PilMode, type PixelDType } from './modes.js';
export type { PixelData, Pixels } from './pixels/pixels.js';
export {
  type ImageTensorDType,
  type ImageTensorOptions,
  imagesToTensor,
  imageToTensor,
  type TensorChannels,
  type TensorLayout,
} from './tensor/image-to-tensor.js';
export { TiffinImage } from './tiffin-image.js';
