module.exports = {
  main(req) { return 1 + }
}
