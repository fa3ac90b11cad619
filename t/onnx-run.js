// Runs an ONNX model in onnxruntime-node: node onnx-run.js MODEL INPUT.f32 DIMS OUTPUT.f32
// INPUT.f32 holds the input's float32 values (little-endian), DIMS its shape ("100,28,28");
// the first output's values go to OUTPUT.f32, and a line of JSON with the names and the output's
// shape to stdout.  onnxruntime-node is found in $SINGA_ONNXRUNTIME_DIR
// (default /usr/local/lib/singa-onnxruntime, where scripts/install-deps.sh puts it).
const fs = require('fs');
const path = require('path');
const dir = process.env.SINGA_ONNXRUNTIME_DIR || '/usr/local/lib/singa-onnxruntime';
const ort = require(require.resolve('onnxruntime-node', { paths: [dir, path.join(dir, 'node_modules')] }));

async function main() {
  const [model, input, dims, output] = process.argv.slice(2);
  const bytes = fs.readFileSync(input);
  const values = new Float32Array(bytes.length / 4);
  for (let i = 0; i < values.length; i++) values[i] = bytes.readFloatLE(4 * i);
  const session = await ort.InferenceSession.create(model);
  const feeds = {};
  feeds[session.inputNames[0]] = new ort.Tensor('float32', values, dims.split(',').map(Number));
  const result = await session.run(feeds);
  const out = result[session.outputNames[0]];
  const buf = Buffer.alloc(out.data.length * 4);
  out.data.forEach((v, i) => buf.writeFloatLE(v, 4 * i));
  fs.writeFileSync(output, buf);
  console.log(JSON.stringify({ inputs: session.inputNames, outputs: session.outputNames, dims: out.dims }));
}
main().catch((e) => { console.error(String(e && e.message || e)); process.exit(1); });
