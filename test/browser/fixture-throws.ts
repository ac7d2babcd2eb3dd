// An entry that fails inside the page: the harness must report the error and still close everything.
export function run(): never {
  throw new Error('fixture-throws: thrown on purpose');
}
