import { Box, Text } from 'ink';
import type { StatusView } from '../../server/services/status/status-section.js';
import { Fields } from './Fields.js';
import { Table } from './Table.js';

export type SectionView = { name: string; title: string } & StatusView;

const MARK = { ok: '✔', warn: '⚠', fail: '✖' } as const;
const COLOR = { ok: 'green', warn: 'yellow', fail: 'red' } as const;

/** Every section: a marked headline, its summary, then its fields and table, fitted to `width`. */
export function StatusScreen({ views, width, at }: { views: SectionView[]; width?: number; at?: string }) {
  const inner = width === undefined ? undefined : width - 2;
  return (
    <Box flexDirection="column">
      {at ? <Text dimColor>Postlane status at {at}</Text> : null}
      {views.map((view) => (
        <Box key={view.name} flexDirection="column" marginTop={1}>
          <Text>
            <Text color={COLOR[view.state]}>{MARK[view.state]}</Text> <Text bold>{view.title}</Text>
          </Text>
          <Box flexDirection="column" paddingLeft={2}>
            <Fields width={inner} rows={[['', view.summary]]} />
            {view.fields ? <Fields width={inner} rows={view.fields} /> : null}
            {view.table ? <Table width={inner} {...view.table} /> : null}
          </Box>
        </Box>
      ))}
    </Box>
  );
}
