/**
 * The library must never leak a rejection (a renewal timer, a cleanup, a subscriber): any unhandled
 * rejection during a test file fails that file.
 */
const rejections: unknown[] = [];
const record = (reason: unknown): void => {
  rejections.push(reason);
};
process.on('unhandledRejection', record);

afterAll(() => {
  process.off('unhandledRejection', record);
  if (rejections.length > 0) {
    const reasons = rejections.map((reason) => (reason instanceof Error ? reason.stack : String(reason)));
    throw new Error(`Unhandled promise rejection(s) during this file:\n${reasons.join('\n')}`);
  }
});
