// The ONNX protobuf schema as protobufjs types. The schema is onnx.proto3, vendored in vendor/onnx/ with its
// license; scripts/generate-onnx-schema.ts turns it into onnx-schema.generated.ts (its JSON descriptor),
// so that an installed netc needs no .proto file at run time. Field names keep the schema's own case.
import protobuf from 'protobufjs';
import { onnxSchema } from './onnx-schema.generated.js';

/** The JSON descriptor of a .proto text, as the generated module holds it. */
export function schemaDescriptor(protoText: string): protobuf.INamespace {
  return protobuf.parse(protoText, { keepCase: true }).root.toJSON();
}

let root: protobuf.Root | undefined;

/** An ONNX message type by its name in the schema: `ModelProto`, `TensorProto`, ... */
export function onnxType(name: string): protobuf.Type {
  root ??= protobuf.Root.fromJSON(onnxSchema as protobuf.INamespace);
  return root.lookupType(`onnx.${name}`);
}
