import { listNamespacesContract } from "../ratelimit/list-namespaces.contract.ts";

listNamespacesContract("ratelimits");
