import path from 'node:path';

/** True when `child` is `parent` itself or a path below it. `..new` is a folder inside; only `..` itself or `../…` leaves the parent. */
export function isSameOrInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return (
    relative === '' ||
    (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}
