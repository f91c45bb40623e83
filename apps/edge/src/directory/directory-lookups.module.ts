import { Global, Module } from '@nestjs/common';
import { DirectoryLookups } from './directory-lookups';

@Global()
@Module({ providers: [DirectoryLookups], exports: [DirectoryLookups] })
export class DirectoryLookupsModule {}
