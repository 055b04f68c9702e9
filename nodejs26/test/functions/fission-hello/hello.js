// Fission's Node.js hello world (fission/examples, nodejs/hello.js): the file the
// fetcher writes as /userfunc/user for `POST /specialize`.
module.exports = async function(context) {
    return {
        status: 200,
        body: "hello, world!\n"
    };
}
