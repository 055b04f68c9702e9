export const main = () => 'ok';
export async function ready() { await new Promise((r) => setTimeout(r, 5)); return false; }
export function alive() { throw new Error('alive-secret'); }
