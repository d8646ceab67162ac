export { releaseLocksAfterCommit } from './release-after-commit.js';
