export function main() {
  return 1 +;
}
