// Run a wasm32-wasi command under Node's WASI: node wasi_run.mjs PROGRAM.wasm ARGS...
// The current directory is preopened as ".", so relative paths (scene files)
// open as they do natively; stdout, stderr and the exit status pass through.
// Used by `make crosscheck` (mk/cross.mk) for the wasm32 target.
import { readFile } from 'node:fs/promises';
import process from 'node:process';
import { WASI } from 'node:wasi';

const [wasmPath, ...args] = process.argv.slice(2);
if (!wasmPath) {
  process.stderr.write('usage: node wasi_run.mjs PROGRAM.wasm [ARGS...]\n');
  process.exit(2);
}
const wasi = new WASI({
  version: 'preview1',
  args: [wasmPath, ...args],
  env: {},
  preopens: { '.': process.cwd() },
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(wasmPath));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
// Node's WASI keeps the memory it saw at start: after a memory.grow its calls
// use a freed buffer (segfault, or output silently lost; see nodejs/node#51303).
// The runner is linked with a fixed memory (initial = maximum), so the heap
// never grows; a module that grows anyway is refused instead of trusted.
const pages = instance.exports.memory.buffer.byteLength;
const code = wasi.start(instance);
if (instance.exports.memory.buffer.byteLength !== pages) {
  process.stderr.write('wasi_run: the module grew its memory; its output cannot be trusted\n');
  process.exitCode = 70;
} else {
  process.exitCode = code;
}
