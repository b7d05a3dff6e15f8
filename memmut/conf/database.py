from oslo_config import cfg

group = cfg.OptGroup('database', title='Controller database options')

opts = [
    cfg.StrOpt('connection',
               secret=True,
               default='sqlite:///$state_path/memmut.sqlite',
               help='SQLAlchemy URL of the controller database, e.g. '
                    'postgresql+psycopg://memmut:secret@db/memmut or '
                    'mysql+pymysql://memmut:secret@db/memmut. The default '
                    'is an embedded SQLite file under state_path.'),
    cfg.BoolOpt('connection_debug',
                default=False,
                help='Log every SQL statement (very verbose).'),
]


def list_opts():
    return {group: opts}
