import { createRoute, z } from '@hono/zod-openapi';
import { commonErrors, jsonContent } from '../../http/schemas.js';

const EnumValue = z.object({ value: z.string(), label: z.string() });
const DifficultyLevel = EnumValue.extend({ order: z.number().int() }).openapi('DifficultyLevel');

export const MetadataSchema = z
  .object({
    difficulty_levels: z.array(DifficultyLevel),
    journey_statuses: z.array(EnumValue),
    learning_verbs: z.array(EnumValue),
  })
  .openapi('Metadata');

export const getMetadata = createRoute({
  method: 'get',
  path: '/',
  tags: ['Metadata'],
  summary: 'All metadata enumerations',
  description: 'Difficulty levels (with order), journey statuses and learning verbs, as defined in the database.',
  responses: { 200: jsonContent(MetadataSchema, 'The enumerations'), ...commonErrors },
});

export const listDifficultyLevels = createRoute({
  method: 'get',
  path: '/difficulty-levels',
  tags: ['Metadata'],
  summary: 'Difficulty levels in order',
  responses: { 200: jsonContent(z.object({ data: z.array(DifficultyLevel) }), 'The levels'), ...commonErrors },
});
