// netc's version: the CLI prints it, and a worker refuses jobs of a coordinator of another version.
export const NETC_VERSION = '0.1.0';
