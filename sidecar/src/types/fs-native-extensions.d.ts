/** The lock functions writ calls (fs-native-extensions ships no types). */
declare module "fs-native-extensions" {
  /**
   * An exclusive lock of the whole file open as `fd` (Linux: an open file description lock, F_OFD_SETLK); false when
   * another open file description holds one. Released when `fd` is closed, by `unlock`, or by the process's death.
   */
  export function tryLock(fd: number): boolean;
}
