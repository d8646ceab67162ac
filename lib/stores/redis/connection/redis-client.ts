import type { Cluster, Redis } from 'ioredis';

/** The ioredis client the store sends through: one server (Sentinel-backed or not) or a Cluster. */
export type RedisClient = Redis | Cluster;
