/** The companion server's version, reported by `cellmate/hello` (kept equal to package.json). */
export const SERVER_VERSION = '0.1.0';
