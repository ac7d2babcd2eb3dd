// Writes src/export/onnx-schema.generated.ts from vendor/onnx/onnx.proto3: the ONNX schema as protobufjs'
// JSON descriptor, which `netc extract --format onnx` encodes models with. Run after updating the vendored
// schema (`npm run onnx-schema`) and commit the result; test/export-onnx.test.ts fails while the two differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { schemaDescriptor } from '../src/export/onnx-schema.js';

const descriptor = schemaDescriptor(readFileSync(new URL('../vendor/onnx/onnx.proto3', import.meta.url), 'utf8'));
const text = `// Generated from vendor/onnx/onnx.proto3 by scripts/generate-onnx-schema.ts (npm run onnx-schema): do not edit.
export const onnxSchema: unknown = ${JSON.stringify(descriptor, null, 2)};
`;
writeFileSync(new URL('../src/export/onnx-schema.generated.ts', import.meta.url), text);
console.log(`wrote src/export/onnx-schema.generated.ts (${text.length} characters)`);
