#!/usr/bin/env node
// Bundles the companion server and Cellmate's JS kernel for the wheel:
//
//   node scripts/bundle.mjs [--out build/companion]
//
// runs `tsc -b` (incremental), then esbuild over the built dist/ into
//
//   <out>/package.json               {"type": "module"} (the bundles are ESM)
//   <out>/server/main.js             the companion (server/dist/main.js and everything it imports)
//   <out>/js-kernel/main.js          the JS kernel; its heartbeat worker beside it
//   <out>/node_modules/<pkg>/…       the native addons, as files: NATIVE below, each with its
//                                    runtime dependencies, pruned to this platform's prebuilds
//   <out>/node_modules/<pkg>/…       FILES below: the code graph's tree-sitter runtime and
//                                    grammars, typescript-language-server and TypeScript
//   <out>/node_modules/.bin/<name>   shims for FILES' bins (the language servers' .bin)
//   <out>/cellmate-bundle.json       platform, wheel tag, native and file packages, bins (the
//                                    wheel test loads each native one with the wheel's node)
//
// The layout keeps the relative paths the built code uses: the server finds the JS kernel
// at `../js-kernel/main.js` from its own file, the kernel its worker at `./heartbeat-worker.js`.
// The hatch build hook (hatch_build.py) calls this and ships <out> as jupyterlab_cellmate/companion.
//
// A native addon must be listed in NATIVE (one line): esbuild cannot inline a `.node` file,
// so an unlisted one fails this build ("No loader is configured for \".node\" files").
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Packages with a native addon, loaded from files at run time (never bundled). `from` is
 * the workspace whose dependency it is (resolution starts there); `prune` drops the
 * prebuilds of other platforms. Add a line here for a new native dependency.
 */
const NATIVE = [
  { pkg: 'zeromq', from: 'kernel-bridge', prune: pruneZeromq },
  { pkg: '@ast-grep/napi', from: 'server' },
  { pkg: '@ast-grep/lang-python', from: 'server', optional: true },
  { pkg: '@ast-grep/lang-bash', from: 'server', optional: true }
];

/**
 * Packages the companion loads or starts from their own files (never bundled): the code
 * graph's tree-sitter runtime and grammar `.wasm`s (grammars.ts resolves them by package),
 * and typescript-language-server with the TypeScript it runs. `keep` picks the files that
 * ship (the rest of a package is tests, sources and other platforms' bindings); `bins` get
 * a shim in node_modules/.bin (workspace/tool-bins.ts searches there) that runs the script with the
 * companion's Node ($CELLMATE_NODE, set by jupyterlab_cellmate), since a wheel's machine
 * may have no `node` for a `#!/usr/bin/env node` line. basedpyright and debugpy come from
 * PyPI instead (pyproject.toml dependencies; their scripts are in the venv's bin).
 */
const FILES = [
  { pkg: 'web-tree-sitter', from: 'server', keep: /^(package\.json|LICENSE|web-tree-sitter\.(js|cjs|wasm))$/ },
  { pkg: 'tree-sitter-python', from: 'server', keep: /^(package\.json|LICENSE|[^/]+\.wasm)$/ },
  { pkg: 'tree-sitter-javascript', from: 'server', keep: /^(package\.json|LICENSE|[^/]+\.wasm)$/ },
  { pkg: 'tree-sitter-typescript', from: 'server', keep: /^(package\.json|LICENSE|[^/]+\.wasm)$/ },
  {
    pkg: 'typescript-language-server',
    from: 'server',
    keep: /^(package\.json|LICENSE|lib\/.*\.m?js)$/,
    bins: { 'typescript-language-server': 'lib/cli.mjs' }
  },
  // TypeScript needs its lib.*.d.ts; the translated messages (lib/<locale>/) are left out.
  {
    pkg: 'typescript',
    from: 'server',
    keep: /^(package\.json|LICENSE\.txt|bin\/.*|lib\/[^/]+\.(js|d\.ts))$/,
    bins: { tsc: 'bin/tsc', tsserver: 'bin/tsserver' }
  }
];

/** Wheel platform tags by `<platform>-<arch>` (glibc floor: see README "Install"). */
const WHEEL_TAGS = {
  'linux-x64': 'manylinux_2_28_x86_64',
  'linux-arm64': 'manylinux_2_28_aarch64',
  'darwin-x64': 'macosx_11_0_x86_64',
  'darwin-arm64': 'macosx_11_0_arm64'
};

/** Files of a package that are never needed at run time. */
const DROP =
  /(^|\/)(\.github|test|tests|docs?|examples?|src|script|vcpkg\.json|CMakeLists\.txt|tsconfig\.json|[^/]*\.(md|markdown|d\.ts|d\.mts|map|ts|cc|cpp|h|hpp|gyp))$/i;

function parseArgs(argv) {
  let out = join(repo, 'build', 'companion');
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out' && argv[i + 1]) out = resolve(argv[++i]);
    else throw new Error(`usage: node scripts/bundle.mjs [--out DIR] (unknown argument ${argv[i]})`);
  }
  return { out };
}

function pruneZeromq(dir) {
  // cmake-ts's loader reads build/manifest.json and tries every entry for this os/arch/libc,
  // newest ABI first (e.g. glibc-127 needs glibc 2.25, glibc-115 2.38): keep exactly those.
  const manifestPath = join(dir, 'build', 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  const keep = {};
  for (const [key, file] of Object.entries(manifest)) {
    const cfg = JSON.parse(key);
    if (cfg.os === process.platform && cfg.arch === process.arch && cfg.libc !== 'musl')
      keep[key] = file.replaceAll('\\', '/');
  }
  if (Object.keys(keep).length === 0)
    throw new Error(`zeromq ships no prebuild for ${process.platform}-${process.arch}`);
  const staged = join(dir, 'build.keep');
  for (const file of Object.values(keep)) {
    mkdirSync(dirname(join(staged, file)), { recursive: true });
    cpSync(join(dir, 'build', file), join(staged, file));
  }
  rmSync(join(dir, 'build'), { recursive: true });
  cpSync(staged, join(dir, 'build'), { recursive: true });
  rmSync(staged, { recursive: true });
  writeFileSync(join(dir, 'build', 'manifest.json'), JSON.stringify(keep));
}

/** The installed directory of `pkg` as `fromDir` resolves it, or null. */
function packageDir(pkg, fromDir) {
  const req = createRequire(join(fromDir, 'package.json'));
  try {
    return dirname(req.resolve(`${pkg}/package.json`));
  } catch {
    // Packages whose "exports" hide package.json: walk up from the main entry.
    try {
      let d = dirname(req.resolve(pkg));
      while (
        !existsSync(join(d, 'package.json')) ||
        JSON.parse(readFileSync(join(d, 'package.json'), 'utf8')).name !== pkg
      )
        d = dirname(d);
      return d;
    } catch {
      return null;
    }
  }
}

/** Copies `pkg` and its runtime dependency closure (installed optional ones too) into out/node_modules. */
function copyPackage(pkg, fromDir, outModules, seen) {
  const dir = packageDir(pkg, fromDir);
  if (!dir) return false;
  if (seen.has(pkg)) return true;
  seen.add(pkg);
  const dest = join(outModules, pkg);
  cpSync(dir, dest, {
    recursive: true,
    dereference: true,
    filter: (src) => {
      const rel = relative(dir, src).replaceAll('\\', '/');
      return rel === '' || (!rel.startsWith('node_modules') && !DROP.test(rel));
    }
  });
  const meta = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  for (const dep of Object.keys(meta.dependencies ?? {})) {
    if (!copyPackage(dep, dir, outModules, seen))
      throw new Error(`${pkg} depends on ${dep}, which is not installed (npm ci)`);
  }
  // Platform packages (@ast-grep/napi-linux-x64-gnu, …): npm installs only this platform's.
  for (const dep of Object.keys(meta.optionalDependencies ?? {})) copyPackage(dep, dir, outModules, seen);
  return true;
}

/** Copies the files of `spec.pkg` that match `spec.keep` (relative paths) and its `bins` shims. */
function copyFiles(spec, outModules) {
  const dir = packageDir(spec.pkg, join(repo, spec.from));
  if (!dir) throw new Error(`${spec.pkg} is not installed (run npm ci)`);
  const dest = join(outModules, spec.pkg);
  cpSync(dir, dest, {
    recursive: true,
    dereference: true,
    filter: (src) => {
      const rel = relative(dir, src).replaceAll('\\', '/');
      return rel === '' || (!rel.startsWith('node_modules') && (statSync(src).isDirectory() || spec.keep.test(rel)));
    }
  });
  pruneEmpty(dest);
  for (const [name, script] of Object.entries(spec.bins ?? {})) {
    if (!existsSync(join(dest, script))) throw new Error(`${spec.pkg}: ${script} (bin ${name}) was not kept`);
    const shim = join(outModules, '.bin', name);
    mkdirSync(dirname(shim), { recursive: true });
    writeFileSync(
      shim,
      `#!/bin/sh\n# ${spec.pkg}'s ${name}, run with the companion's Node (scripts/bundle.mjs FILES).\nexec "\${CELLMATE_NODE:-node}" "$(dirname "$0")/../${spec.pkg}/${script}" "$@"\n`,
      { mode: 0o755 }
    );
  }
}

/** Removes the folders under `d` that the filter left empty. */
function pruneEmpty(d) {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    pruneEmpty(join(d, e.name));
    if (readdirSync(join(d, e.name)).length === 0) rmSync(join(d, e.name), { recursive: true });
  }
}

function dirSize(d) {
  return readdirSync(d, { withFileTypes: true }).reduce(
    (n, e) => n + (e.isDirectory() ? dirSize(join(d, e.name)) : statSync(join(d, e.name)).size),
    0
  );
}

async function main() {
  const { out } = parseArgs(process.argv.slice(2));
  const platform = `${process.platform}-${process.arch}`;
  const tag = WHEEL_TAGS[platform];
  if (!tag) throw new Error(`no wheel tag for ${platform}; add it to WHEEL_TAGS in scripts/bundle.mjs`);
  execFileSync(join(repo, 'node_modules', '.bin', 'tsc'), ['-b'], { cwd: repo, stdio: 'inherit' });
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });

  const natives = NATIVE.filter((n) => !n.optional || packageDir(n.pkg, join(repo, n.from)));
  const common = {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20.19',
    external: [...natives, ...FILES].map((n) => n.pkg),
    // Bundled CommonJS dependencies call require(): give the ESM bundle a real one.
    banner: {
      js: "import { createRequire as __cellmateRequire } from 'node:module'; const require = __cellmateRequire(import.meta.url);"
    },
    legalComments: 'none',
    sourcemap: false,
    logLevel: 'warning'
  };
  const K = join(repo, 'kernel-bridge', 'dist', 'js-kernel');
  await build({ ...common, entryPoints: { 'server/main': join(repo, 'server', 'dist', 'main.js') }, outdir: out });
  await build({
    ...common,
    entryPoints: { 'js-kernel/main': join(K, 'main.js'), 'js-kernel/heartbeat-worker': join(K, 'heartbeat-worker.js') },
    outdir: out
  });
  writeFileSync(join(out, 'package.json'), JSON.stringify({ type: 'module', private: true }, null, 2) + '\n');

  const modules = join(out, 'node_modules');
  const seen = new Set();
  for (const n of natives) {
    if (!copyPackage(n.pkg, join(repo, n.from), modules, seen))
      throw new Error(`${n.pkg} is not installed (run npm ci)`);
    n.prune?.(join(modules, n.pkg));
  }
  for (const f of FILES) copyFiles(f, modules);
  const manifest = {
    platform,
    wheelTag: tag,
    natives: natives.map((n) => n.pkg),
    packages: [...seen].sort(),
    files: FILES.map((f) => f.pkg),
    bins: FILES.flatMap((f) => Object.keys(f.bins ?? {}))
  };
  writeFileSync(join(out, 'cellmate-bundle.json'), JSON.stringify(manifest, null, 2) + '\n');
  process.stdout.write(
    `bundled the companion into ${out} (${(dirSize(out) / 1e6).toFixed(1)} MB, ${tag}; natives: ${manifest.natives.join(', ')})\n`
  );
}

main().catch((e) => {
  process.stderr.write(`scripts/bundle.mjs: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
