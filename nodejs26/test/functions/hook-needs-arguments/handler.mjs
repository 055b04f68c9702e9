export const main = () => "ok";
export function ready(probe) { return true; }
