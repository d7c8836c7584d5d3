import pino, { type DestinationStream, type Logger } from 'pino';

/** Structured JSON logs; `destination` lets tests capture lines. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'sparkpath-api' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.refresh_token', '*.access_token'], remove: true },
    },
    destination,
  );
}
