// Pillow-exact Lanczos lives with the host-array maths (the pipeline resizes ControlNet images with it).
export { type Rgb8Image, resizeLanczos } from '../latents/lanczos-resize.js';
