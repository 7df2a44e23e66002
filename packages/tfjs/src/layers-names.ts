/**
 * Stable tensor names of a LayersModel, read from its model.json rather than from the loaded model: tfjs makes
 * layer names unique per process (`dense_1`, `dense_1_1`), so names taken after loading could differ between
 * the thread that reads the signature and the threads that run the model. Keras's conventions: a Functional
 * model lists `input_layers` and `output_layers`; a Sequential model's input is its InputLayer, or
 * `<first layer>_input`, and its output is its last layer.
 */
export interface LayersTensorNames {
  inputs: string[];
  outputs: string[];
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const layerName = (layer: unknown): string | undefined => {
  if (!isRecord(layer)) return undefined;
  const config = layer.config;
  const name = isRecord(config) ? config.name : layer.name;
  return typeof name === 'string' ? name : undefined;
};

const endpoints = (list: unknown): string[] | undefined =>
  Array.isArray(list) && list.every((e) => Array.isArray(e) && typeof e[0] === 'string')
    ? list.map((e) => (e as string[])[0]!)
    : undefined;

/** The names, or undefined where model.json does not say (then positions name them). */
export function layersTensorNames(modelTopology: unknown): LayersTensorNames | undefined {
  if (!isRecord(modelTopology)) return undefined;
  // tensorflowjs_converter wraps a Keras model's JSON in `model_config`.
  const model = isRecord(modelTopology.model_config) ? modelTopology.model_config : modelTopology;
  const config = model.config;
  if (model.class_name === 'Sequential') {
    const layers = Array.isArray(config) ? config : isRecord(config) ? config.layers : undefined;
    if (!Array.isArray(layers) || layers.length === 0) return undefined;
    const first = layers[0] as Record<string, unknown>;
    const firstName = layerName(first);
    const lastName = layerName(layers[layers.length - 1]);
    if (!firstName || !lastName) return undefined;
    const input = first.class_name === 'InputLayer' ? firstName : `${firstName}_input`;
    return { inputs: [input], outputs: [lastName] };
  }
  if (!isRecord(config)) return undefined;
  const inputs = endpoints(config.input_layers);
  const outputs = endpoints(config.output_layers);
  return inputs && outputs ? { inputs, outputs } : undefined;
}
