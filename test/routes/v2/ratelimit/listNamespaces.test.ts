import { listNamespacesContract } from "./list-namespaces.contract.ts";

listNamespacesContract("ratelimit");
