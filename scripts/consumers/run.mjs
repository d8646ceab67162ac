// Proves the packed library works where users install it: a Nest 11 CommonJS + Jest app and a Nest 12 ES
// module app, each built from a template next to this file, installing the real .tgz from the registry's
// point of view (no links into this repo); a core-only app; and docs-samples, the documentation's samples
// (scripts/docs/doc-samples.cjs) type-checked and their specs run against the installed package.
//
//   node scripts/consumers/run.mjs --only=docs-samples    (those consumers alone)
//   npm run test:consumers            REDIS_URL=redis://host:6379 npm run test:consumers
//   node scripts/consumers/run.mjs --keep    (leaves the work dir in place for inspection)
//   CONSUMERS_TARBALL=/path/pkg.tgz node scripts/consumers/run.mjs   (checks that package, no build)
// The Node running this script is the one the consumers run on (npm, tsc, Jest, the apps).
import { spawn } from 'node:child_process';
import {
  accessSync,
  constants,
  cpSync,
  createWriteStream,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import docSamples from '../docs/doc-samples.cjs';

const { writeDocSamples } = docSamples;

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const ALL_CONSUMERS = ['nest11-cjs', 'nest12-esm', 'core-only', 'docs-samples'];
// `--only a,b` checks those consumers alone (say, docs-samples after a docs change).
const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length).split(',');
const CONSUMERS = only ?? ALL_CONSUMERS;
const INSTALL_TIMEOUT_MS = 240_000;
// Generous for tsc + Jest on two cores, yet short enough to turn a process that never exits (a socket or
// timer the library left open after close) into a failure instead of a stuck run.
const CHECK_TIMEOUT_MS = 150_000;
const keep = process.argv.includes('--keep');

const running = new Set();
let redis;
let workDir;

function fail(message) {
  console.error(`test:consumers: ${message}`);
  cleanup();
  process.exit(1);
}

function cleanup() {
  for (const child of running) killTree(child);
  running.clear();
  if (redis && redis.exitCode === null) redis.kill('SIGTERM');
  redis = undefined;
  // Killed installers may still be writing for a moment: retry instead of failing the cleanup.
  if (workDir && !keep) rmSync(workDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}

// npm children run in their own process group, so the whole tree (npm > sh > jest workers) goes at once.
function killTree(child) {
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
}

// Last resort for an unexpected exit path: never leave the private Redis behind.
process.on('exit', () => redis?.kill('SIGTERM'));
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    console.error(`\ntest:consumers: ${signal}, stopping`);
    cleanup();
    process.exit(130);
  });
}

// When this runs as `npm run test:consumers`, npm exports the repo as its local prefix; a nested npm must
// find its own project from its working directory instead, and package/lifecycle variables describe ours.
// The Node running this script is the one under test (CI runs it once per Node version): its directory goes
// first on PATH, so the `npm` spawned below (a `#!/usr/bin/env node` script), the consumers' `node` and their
// npm scripts all run on it, not on whatever `node` the machine has.
function childEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  env.PATH = [dirname(process.execPath), ...(env.PATH ?? '').split(delimiter).filter(Boolean)].join(delimiter);
  const ours = ['npm_config_local_prefix', 'npm_command', 'INIT_CWD'];
  for (const name of Object.keys(env)) {
    if (/^npm_(package|lifecycle)_/.test(name) || ours.includes(name)) delete env[name];
  }
  return env;
}

/**
 * Runs a command, its output going to `log` (and to the terminal when `log` is absent). Resolves with the
 * exit code and the captured stdout, so callers decide what failure means.
 */
function run(command, args, { cwd, env, log, timeoutMs }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd,
      env: env ?? childEnv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: process.platform === 'win32',
    });
    running.add(child);
    let stdout = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killTree(child);
    }, timeoutMs);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      (log ?? process.stdout).write(chunk);
    });
    child.stderr.on('data', (chunk) => (log ?? process.stderr).write(chunk));
    child.on('error', (error) => {
      (log ?? process.stderr).write(`${error.message}\n`);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      if (timedOut) (log ?? process.stderr).write(`\n[timed out after ${timeoutMs / 1000}s: killed]\n`);
      resolve({ code: timedOut ? 'timeout' : (code ?? signal), stdout });
    });
  });
}

function onPath(binary) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(dir, binary), constants.X_OK);
      return true;
    } catch {
      // Not in this directory.
    }
  }
  return false;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function ping(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    socket.setTimeout(500, () => socket.destroy());
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk;
      if (reply.includes('\r\n')) socket.end();
    });
    socket.on('close', () => resolve(reply.startsWith('+PONG')));
    socket.on('error', () => undefined);
  });
}

/** A throwaway Redis: nothing persisted, loopback only, and gone with this process. */
async function startRedis() {
  // Another process can grab the port between freePort() and redis binding it: try a few.
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    let output = '';
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    const server = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout.on('data', (chunk) => (output += chunk));
    server.stderr.on('data', (chunk) => (output += chunk));
    server.on('error', (error) => (output += error.message));
    redis = server;
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && server.exitCode === null && !server.killed) {
      if (await ping(port)) return `redis://127.0.0.1:${port}`;
      await new Promise((r) => setTimeout(r, 50));
    }
    server.kill('SIGTERM');
    redis = undefined;
    if (attempt === 3) fail(`redis-server did not start on 127.0.0.1:${port}: ${output.trim().split('\n').pop()}`);
  }
}

// TypeScript sources are kept as *.ts.tpl: the repo's own `tsc -p tsconfig.json` includes scripts/, and must
// not compile these against Nest 11 and a package that is not installed at the repo root.
function materialize(template, target, tarball) {
  cpSync(join(HERE, template), target, { recursive: true });
  const rename = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) rename(path);
      else if (entry.name.endsWith('.tpl')) renameSync(path, path.slice(0, -'.tpl'.length));
    }
  };
  rename(target);
  // The documentation's samples are its sources, written from the Markdown as the repo's spec reads it.
  if (template === 'docs-samples') writeDocSamples(target);
  const manifestPath = join(target, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  manifest.dependencies['nestjs-distributed-lock'] = `file:${tarball}`;
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

function installedVersion(appDir, name) {
  try {
    return JSON.parse(readFileSync(join(appDir, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

function tail(file, lines) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function checkConsumer(name, tarball, redisUrl) {
  const started = Date.now();
  const appDir = join(workDir, name);
  const logFile = join(workDir, `${name}.log`);
  const log = createWriteStream(logFile);
  const manifest = materialize(name, appDir, tarball);
  const result = { name, format: manifest.type === 'module' ? 'ESM' : 'CommonJS', logFile };

  const installArgs = ['install', '--no-audit', '--no-fund'];
  const install = await run('npm', installArgs, { cwd: appDir, log, timeoutMs: INSTALL_TIMEOUT_MS });
  result.nest = installedVersion(appDir, '@nestjs/core');
  result.ioredis = installedVersion(appDir, 'ioredis');
  result.typescript = installedVersion(appDir, 'typescript');
  if (install.code !== 0) {
    result.failure = `npm install exited ${install.code}`;
  } else {
    const env = childEnv({ REDIS_URL: redisUrl });
    const check = await run('npm', ['run', 'check'], { cwd: appDir, env, log, timeoutMs: CHECK_TIMEOUT_MS });
    if (check.code !== 0) result.failure = `npm run check exited ${check.code}`;
  }
  await new Promise((resolve) => log.end(resolve));
  result.seconds = Math.round((Date.now() - started) / 1000);
  return result;
}

async function main() {
  const started = Date.now();
  const externalRedis = process.env.REDIS_URL;
  if (!externalRedis && !onPath('redis-server')) {
    fail('no REDIS_URL and no redis-server on PATH: install Redis (e.g. apt-get install redis-server) or set REDIS_URL.');
  }

  // Outside the repo on purpose: under it, Node's lookup would climb to the repo's node_modules and hide a
  // dependency the package forgot to declare, or hand the Nest 12 app the repo's Nest 11.
  workDir = mkdtempSync(join(tmpdir(), 'nestjs-distributed-lock-consumers-'));
  const redisUrl = externalRedis ?? (await startRedis());
  console.log(`test:consumers: Redis ${externalRedis ? 'from REDIS_URL' : `private at ${redisUrl}`}, work dir ${workDir}`);

  // `npm version` outside a package reports the runtime npm itself runs on: it must be this script's Node.
  const versions = await run('npm', ['version', '--json'], { cwd: workDir, log: createWriteStream(join(workDir, 'versions.log')), timeoutMs: 60_000 });
  const npmNode = versions.code === 0 ? JSON.parse(versions.stdout).node : undefined;
  if (npmNode !== process.versions.node) {
    fail(`npm runs on Node ${npmNode ?? '?'}, not on this script's ${process.version} (${process.execPath})`);
  }
  console.log(`test:consumers: Node ${process.version} (${process.execPath}), npm ${JSON.parse(versions.stdout).npm}`);

  let tarball;
  if (process.env.CONSUMERS_TARBALL) {
    // The CI's Node matrix packs once and checks that same package on every Node version.
    tarball = join(workDir, basename(process.env.CONSUMERS_TARBALL));
    cpSync(process.env.CONSUMERS_TARBALL, tarball);
    console.log(`test:consumers: using ${process.env.CONSUMERS_TARBALL} (CONSUMERS_TARBALL); installing consumers...`);
  } else {
    const build = await run('npm', ['run', 'build'], { cwd: ROOT, timeoutMs: 120_000 });
    if (build.code !== 0) fail(`npm run build exited ${build.code}`);
    const pack = await run('npm', ['pack', '--json', '--pack-destination', workDir], {
      cwd: ROOT,
      log: createWriteStream(join(workDir, 'pack.log')),
      timeoutMs: 60_000,
    });
    if (pack.code !== 0) fail(`npm pack exited ${pack.code} (see ${join(workDir, 'pack.log')})`);
    const [{ filename, entryCount }] = JSON.parse(pack.stdout);
    tarball = join(workDir, filename);
    console.log(`test:consumers: packed ${filename} (${entryCount} files); installing consumers...`);
  }

  // Installs are mostly network waits and the checks are short, so both consumers run side by side.
  const results = await Promise.all(CONSUMERS.map((name) => checkConsumer(name, tarball, redisUrl)));

  for (const result of results.filter((r) => r.failure)) {
    console.log(`\n--- ${result.name}: ${result.failure}; last lines of its log ---\n${tail(result.logFile, 60)}`);
  }
  console.log('\nconsumer      result  @nestjs/core  format    ioredis  typescript  time');
  for (const r of results) {
    console.log(
      `${r.name.padEnd(14)}${(r.failure ? 'FAIL' : 'PASS').padEnd(8)}${r.nest.padEnd(14)}${r.format.padEnd(10)}` +
        `${r.ioredis.padEnd(9)}${r.typescript.padEnd(12)}${r.seconds}s`,
    );
  }
  console.log(`total ${Math.round((Date.now() - started) / 1000)}s${keep ? `, work dir kept: ${workDir}` : ''}`);
  const failed = results.some((r) => r.failure);
  if (failed && !keep) console.log('rerun with `node scripts/consumers/run.mjs --keep` to inspect the apps');
  cleanup();
  process.exitCode = failed ? 1 : 0;
}

main().catch((error) => {
  console.error(error);
  cleanup();
  process.exit(1);
});
