// Registers a module resolve hook under which importing any @tensorflow/* package throws.
import { register } from 'node:module';

const hooks = `
export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@tensorflow/')) throw new Error('forbidden import: ' + specifier);
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
