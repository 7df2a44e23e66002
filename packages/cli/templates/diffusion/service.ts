import { demoModelDir } from '@tiffin/demo-model';
import { createDiffusionService } from '@tiffin/diffusion';

// The bundled demo model (64×64 coloured shapes, offline, CPU) unless MODEL_DIR names a diffusers-format
// Stable Diffusion 1.x/2.x folder.
const { service } = createDiffusionService({
  modelDir: process.env.MODEL_DIR ?? demoModelDir(),
  name: 'diffusion',
});

export default service;
