import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const REGISTER = join(__dirname, 'register-ts.cjs');

/** Forks a TypeScript worker script with an IPC channel. */
export function forkWorker(script: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): ChildProcess {
  return fork(script, args, {
    execArgv: ['-r', REGISTER],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** Resolves with the first IPC message matching `predicate`; rejects if the child exits first. */
export function nextMessage<T>(child: ChildProcess, predicate: (message: T) => boolean = () => true): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: T): void => {
      if (!predicate(message)) return;
      cleanup();
      resolve(message);
    };
    const onExit = (code: number | null, signal: string | null): void => {
      cleanup();
      reject(new Error(`worker exited (code ${code}, signal ${signal}) before sending the expected message`));
    };
    const cleanup = (): void => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

export function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}
