#!/usr/bin/env bash
# The benchmark on a GPU machine, in two steps:
#
#   bench/gpu.sh pack [--out DIR] [--no-node]   here, where node_modules is: builds DIR (default
#                                               bench/gpu-bundle/, git-ignored, < 64 MiB) with everything
#                                               the run needs: bench/gpu-bench.ts bundled by esbuild (netc,
#                                               TF.js, the webgpu and wasm backends), Dawn's dawn.node
#                                               (the 'webgpu' package, linux-x64), the .wasm files, the
#                                               Vulkan loader (libvulkan.so.1) and, unless --no-node, this
#                                               machine's node binary, xz-compressed, for a machine without one
#   bench/gpu.sh run [--bundle DIR] [--quick] [--wasm-only] [--deadline SECONDS]
#                                               there: probes for the GPU (nvidia-smi, CUDA, Vulkan ICDs, a
#                                               WebGPU adapter) and runs the forum and LeNet workloads on
#                                               webgpu, then on wasm for scale, within 5 minutes (deadline
#                                               270 s for the measurements); needs nothing but the bundle
#                                               and a Linux x86-64 machine (node from PATH or the bundle)
#   bench/gpu.sh probe [--bundle DIR]           the probes only
#
# On the GPU machine nothing is installed and nothing is downloaded (it has no network): tfjs-node-gpu is
# not an option there, its install script downloads libtensorflow; the probe reports CUDA for the record.
set -euo pipefail
cd "$(dirname "$0")/.."

cmd="${1:-}"
shift || true
bundle=bench/gpu-bundle
with_node=1
run_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out | --bundle) bundle="$2"; shift 2 ;;
    --no-node) with_node=0; shift ;;
    --quick | --wasm-only) run_args+=("$1"); shift ;;
    --deadline) run_args+=("$1" "$2"); shift 2 ;;
    *) echo "gpu.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

LIMIT_BYTES=$((64 * 1024 * 1024))
# the dynamic linker's cache, read once (a pipe from ldconfig into a reader that stops early would end in
# SIGPIPE, which pipefail turns into a failure)
ldcache=$(ldconfig -p 2>/dev/null || true)

pack() {
  command -v npx >/dev/null || { echo "gpu.sh pack: needs node and npx (and node_modules: npm ci)" >&2; exit 1; }
  [[ -d node_modules/webgpu && -d node_modules/@tensorflow/tfjs-backend-wasm ]] || { echo "gpu.sh pack: node_modules is missing; run npm ci" >&2; exit 1; }
  local dawn=node_modules/webgpu/dist/linux-x64/dawn.node
  [[ -f $dawn ]] || { echo "gpu.sh pack: $dawn is missing" >&2; exit 1; }
  rm -rf "$bundle"
  mkdir -p "$bundle/node_modules/webgpu/dist/linux-x64" "$bundle/wasm" "$bundle/examples" "$bundle/lib"
  # One ESM file; 'webgpu' stays outside (it loads dawn.node next to itself). CommonJS code inside the bundle
  # (TF.js's node builds) uses require() and __dirname, which an ES module has only through the banner.
  npx esbuild bench/gpu-bench.ts --bundle --platform=node --format=esm --target=node18 --log-level=warning \
    --external:webgpu --external:@tensorflow/tfjs-node --external:@tensorflow/tfjs-node-gpu \
    --banner:js="import { createRequire as __netcRequire } from 'node:module'; import { fileURLToPath as __netcPath } from 'node:url'; const require = __netcRequire(import.meta.url); const __filename = __netcPath(import.meta.url); const __dirname = __netcPath(new URL('.', import.meta.url));" \
    --outfile="$bundle/gpu-bench.mjs"
  cp node_modules/webgpu/index.js node_modules/webgpu/package.json node_modules/webgpu/LICENSE.md "$bundle/node_modules/webgpu/"
  cp "$dawn" "$bundle/node_modules/webgpu/dist/linux-x64/"
  cp node_modules/@tensorflow/tfjs-backend-wasm/dist/*.wasm "$bundle/wasm/"
  cp examples/forum.net examples/lenet.net "$bundle/examples/"
  # the Vulkan loader, for a machine whose NVIDIA driver has an ICD but no loader installed
  local loader
  loader=$(awk '/libvulkan\.so\.1 .*x86-64/ {print $NF; exit}' <<<"$ldcache")
  if [[ -n "$loader" ]]; then cp -L "$loader" "$bundle/lib/libvulkan.so.1"; else echo "gpu.sh pack: no libvulkan.so.1 here; the bundle relies on the GPU machine's Vulkan loader"; fi
  if [[ $with_node -eq 1 ]]; then
    local used
    used=$(du -sb "$bundle" | cut -f1)
    xz -T0 -6 -c "$(command -v node)" > "$bundle/node.xz"
    if (( used + $(stat -c %s "$bundle/node.xz") > LIMIT_BYTES - 2 * 1024 * 1024 )); then
      echo "gpu.sh pack: node.xz would take the bundle over 62 MiB; left out (the GPU machine's node will be needed)"
      rm -f "$bundle/node.xz"
    fi
  fi
  local total
  total=$(du -sb "$bundle" | cut -f1)
  echo "gpu.sh pack: $bundle is $((total / 1024 / 1024)) MiB ($total bytes; the run carries at most 64 MiB):"
  (cd "$bundle" && find . -type f -printf '  %8s  %p\n' | sort -k2)
  if (( total > LIMIT_BYTES )); then echo "gpu.sh pack: over 64 MiB" >&2; exit 1; fi
  # check that the bundle loads without node_modules: a wasm-only smoke run from a copy elsewhere is what
  # the test does (test/gpu-bundle.test.ts); here only that it parses
  node --check "$bundle/gpu-bench.mjs"
  echo "gpu.sh pack: done; on the GPU machine, in this repository with $bundle carried along: bench/gpu.sh run"
}

# Which node to run: PATH's (>= 18), else the one in the bundle (always, with NETC_GPU_BUNDLED_NODE=1).
find_node() {
  local n
  if [[ -z ${NETC_GPU_BUNDLED_NODE:-} ]] && n=$(command -v node) && [[ $("$n" -p 'process.versions.node.split(".")[0]') -ge 18 ]]; then echo "$n"; return; fi
  if [[ -f "$bundle/node.xz" ]]; then
    local out="${TMPDIR:-/tmp}/netc-gpu-node"
    if [[ ! -x $out ]]; then
      if command -v xz >/dev/null; then xz -dc "$bundle/node.xz" > "$out"
      elif command -v python3 >/dev/null; then python3 -c 'import lzma,sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())' "$bundle/node.xz" > "$out"
      else echo "gpu.sh: no node >= 18 on PATH, and neither xz nor python3 to unpack the bundle's" >&2; return 1; fi
      chmod +x "$out"
    fi
    echo "$out"; return
  fi
  echo "gpu.sh: no node >= 18 on PATH and none in $bundle (packed with --no-node)" >&2
  return 1
}

probe() {
  echo "== machine: $(uname -srm); $(nproc) cores; $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "== NVIDIA / CUDA"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | sed 's/^/  /' || true
    nvidia-smi 2>/dev/null | awk '/CUDA Version/ {print "  " $0}' || true
  else
    echo "  no nvidia-smi"
  fi
  awk '/libcuda\.so|libcudart|libcudnn|libGLX_nvidia|libEGL_nvidia|libnvidia-glcore|libvulkan\.so/ {print "  " $1}' <<<"$ldcache" | sort -u
  echo "  tfjs-node-gpu: not usable here (its install downloads libtensorflow; this machine has no network)"
  echo "== Vulkan ICDs"
  local found=0 d
  for d in /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d; do
    [[ -d $d ]] && for f in "$d"/*.json; do [[ -f $f ]] && { echo "  $f"; found=1; }; done
  done
  [[ $found -eq 1 ]] || echo "  none in the usual places"
  # NVIDIA containers often mount the driver's libraries without its Vulkan ICD file: write one
  if ! ls /usr/share/vulkan/icd.d/nvidia_icd*.json /etc/vulkan/icd.d/nvidia_icd*.json >/dev/null 2>&1; then
    local glx
    glx=$(awk '/libGLX_nvidia\.so\.0/ {print $NF; exit}' <<<"$ldcache")
    if [[ -n "$glx" ]]; then
      local icd="${TMPDIR:-/tmp}/netc_nvidia_icd.json"
      printf '{"file_format_version": "1.0.0", "ICD": {"library_path": "%s", "api_version": "1.3.0"}}\n' "$glx" > "$icd"
      export VK_ICD_FILENAMES="$icd" VK_DRIVER_FILES="$icd"
      echo "  no nvidia_icd.json, but $glx is there: wrote $icd and set VK_ICD_FILENAMES"
    fi
  fi
  if ! grep -q 'libvulkan\.so\.1 ' <<<"$ldcache"; then
    if [[ -f "$bundle/lib/libvulkan.so.1" ]]; then
      export LD_LIBRARY_PATH="$(cd "$bundle/lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      echo "  no system Vulkan loader: using the bundle's ($bundle/lib/libvulkan.so.1)"
    else
      echo "  no Vulkan loader (libvulkan.so.1): Dawn will find no adapter"
    fi
  fi
  echo "== node"
  NODE=$(find_node) || return 1
  echo "  $NODE: $("$NODE" --version)"
  echo "== WebGPU adapter (Dawn)"
  (cd "$bundle" && timeout 60 "$NODE" --input-type=module -e "
    import { create, globals } from 'webgpu';
    const gpu = create([]);
    const adapters = [];
    for (const powerPreference of ['high-performance', 'low-power']) {
      const a = await gpu.requestAdapter({ powerPreference });
      if (a) adapters.push(powerPreference + ': ' + [a.info.vendor, a.info.architecture, a.info.device, a.info.description].filter(Boolean).join(' | '));
    }
    console.log(adapters.length ? adapters.map((a) => '  ' + a).join('\n') : '  no adapter');
    process.exit(0);
  " 2>&1 | grep -v 'artificially reduced' || echo "  Dawn failed to start")
}

case "$cmd" in
  pack) pack ;;
  probe)
    [[ -f "$bundle/gpu-bench.mjs" ]] || { echo "gpu.sh: no bundle in $bundle; run bench/gpu.sh pack first (where node_modules is)" >&2; exit 1; }
    probe ;;
  run)
    [[ -f "$bundle/gpu-bench.mjs" ]] || { echo "gpu.sh: no bundle in $bundle; run bench/gpu.sh pack first (where node_modules is)" >&2; exit 1; }
    probe || true
    NODE=$(find_node)
    echo "== benchmark"
    (cd "$bundle" && timeout 300 "$NODE" gpu-bench.mjs ${run_args[@]+"${run_args[@]}"} 2>&1 | grep -v 'artificially reduced')
    ;;
  *) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
