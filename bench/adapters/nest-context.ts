import { Module, type DynamicModule, type INestApplicationContext, type Provider, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

/**
 * A Nest application context holding one lock module and the providers that use it, the way an
 * application instance would. Every call gets its own module class, so contexts never share providers.
 */
export async function openNestContext(imports: DynamicModule[], providers: Provider[] = []): Promise<INestApplicationContext> {
  class BenchAppModule {}
  Module({ imports, providers })(BenchAppModule);
  return NestFactory.createApplicationContext(BenchAppModule as Type<unknown>, { logger: false, abortOnError: false });
}
