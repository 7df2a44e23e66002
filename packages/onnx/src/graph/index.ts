export {
  type AttributeValue,
  DataType,
  type DataTypeCode,
  type Dim,
  encodeModel,
  type GraphDef,
  type InitializerDef,
  type ModelDef,
  type NodeDef,
  type TensorData,
  type ValueInfoDef,
} from './onnx-proto.js';
export { ProtoWriter } from './protobuf.js';
