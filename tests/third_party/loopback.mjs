// Preloaded (node --import ./loopback.mjs): a server that listens on a port alone listens on
// 127.0.0.1 only (the test servers here never bind other interfaces).
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === "number" || typeof args[0] === "string") && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
