// A process's environment variable where there is a process (Node), and undefined where there is none (a
// page): the runtime and the trainer run in browsers too, where `process` is not defined.

export function envVar(name: string): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
}
