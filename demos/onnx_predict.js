// Runs an ONNX image classifier in onnxruntime-node on an IDX image file (plain or gzip), such as
// the model demos/export_onnx.lua exports from the Fashion-MNIST MLP:
//   node demos/onnx_predict.js MODEL IMAGES [LABELS] [--out PROBS.f32]
// The model's input takes raw pixels, N x H x W as the IDX file holds them (the export carries
// kMnist's normalisation).  Prints the accuracy against LABELS; --out writes every image's
// outputs as float32 (little-endian).  onnxruntime-node is looked for in $SINGA_ONNXRUNTIME_DIR
// (default /usr/local/lib/singa-onnxruntime, where scripts/install-deps.sh installs it).
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const dir = process.env.SINGA_ONNXRUNTIME_DIR || '/usr/local/lib/singa-onnxruntime';
const ort = require(require.resolve('onnxruntime-node', { paths: [dir, path.join(dir, 'node_modules')] }));

function readIdx(file) {
  let b = fs.readFileSync(file);
  if (b[0] === 0x1f && b[1] === 0x8b) b = zlib.gunzipSync(b);
  const ndim = b[3];
  const dims = [];
  for (let i = 0; i < ndim; i++) dims.push(b.readUInt32BE(4 + 4 * i));
  return { dims, bytes: b.subarray(4 + 4 * ndim) };
}

async function main() {
  const args = process.argv.slice(2);
  const at = args.indexOf('--out');
  const out = at >= 0 ? args.splice(at, 2)[1] : null;
  const [model, images, labels] = args;
  if (!model || !images) throw new Error('usage: node onnx_predict.js MODEL IMAGES [LABELS] [--out PROBS.f32]');
  const img = readIdx(images);
  const lab = labels ? readIdx(labels).bytes : null;
  const session = await ort.InferenceSession.create(model);
  const n = img.dims[0], size = img.bytes.length / n, batch = 1000;
  const chunks = [];
  let correct = 0;
  const t0 = process.hrtime.bigint();
  for (let start = 0; start < n; start += batch) {
    const count = Math.min(batch, n - start);
    const x = Float32Array.from(img.bytes.subarray(start * size, (start + count) * size));
    const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', x, [count, ...img.dims.slice(1)]) };
    const y = (await session.run(feeds))[session.outputNames[0]].data;
    const k = y.length / count;
    for (let i = 0; i < count; i++) {
      let best = 0;
      for (let c = 1; c < k; c++) if (y[i * k + c] > y[i * k + best]) best = c;
      if (lab && best === lab[start + i]) correct++;
    }
    chunks.push(Buffer.from(y.buffer, y.byteOffset, y.byteLength));
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (out) fs.writeFileSync(out, Buffer.concat(chunks));
  console.log(`onnxruntime-node ${require(require.resolve('onnxruntime-node/package.json', { paths: [dir, path.join(dir, 'node_modules')] })).version}: ` +
              `${n} images through ${path.basename(model)} ('${session.inputNames[0]}' -> '${session.outputNames[0]}') in ${ms.toFixed(0)} ms` +
              (lab ? `, accuracy ${(correct / n).toFixed(4)}` : ''));
}
main().catch((e) => { console.error(`onnx_predict.js: ${e && e.message || e}`); process.exit(1); });
