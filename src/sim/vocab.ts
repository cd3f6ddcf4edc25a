/** Word lists for the simulated registry world (DOMAIN.md value sets). Plain data. */

/** Province code → [name prefix used in enterprise names, 6-digit division codes, districts]. */
export const PROVINCES: Record<
  number,
  { name: string; divisions: string[]; districts: string[]; weight: number }
> = {
  11: {
    name: '北京',
    divisions: ['110105', '110108', '110106', '110114'],
    districts: ['朝阳区', '海淀区', '丰台区', '昌平区'],
    weight: 10,
  },
  31: {
    name: '上海',
    divisions: ['310115', '310104', '310112', '310110'],
    districts: ['浦东新区', '徐汇区', '闵行区', '杨浦区'],
    weight: 10,
  },
  44: {
    name: '深圳',
    divisions: ['440305', '440304', '440306', '440307'],
    districts: ['南山区', '福田区', '宝安区', '龙岗区'],
    weight: 12,
  },
  33: {
    name: '杭州',
    divisions: ['330106', '330108', '330110', '330105'],
    districts: ['西湖区', '滨江区', '余杭区', '拱墅区'],
    weight: 9,
  },
  32: {
    name: '苏州',
    divisions: ['320505', '320506', '320508', '320583'],
    districts: ['虎丘区', '吴中区', '姑苏区', '昆山市'],
    weight: 9,
  },
  37: {
    name: '青岛',
    divisions: ['370202', '370203', '370211', '370212'],
    districts: ['市南区', '市北区', '黄岛区', '崂山区'],
    weight: 6,
  },
  51: {
    name: '成都',
    divisions: ['510104', '510107', '510116', '510124'],
    districts: ['锦江区', '武侯区', '双流区', '郫都区'],
    weight: 6,
  },
  42: {
    name: '武汉',
    divisions: ['420102', '420106', '420111', '420115'],
    districts: ['江岸区', '武昌区', '洪山区', '江夏区'],
    weight: 5,
  },
  35: {
    name: '厦门',
    divisions: ['350203', '350206', '350211', '350212'],
    districts: ['思明区', '湖里区', '集美区', '同安区'],
    weight: 4,
  },
  12: {
    name: '天津',
    divisions: ['120101', '120104', '120116', '120118'],
    districts: ['和平区', '南开区', '滨海新区', '静海区'],
    weight: 4,
  },
  50: {
    name: '重庆',
    divisions: ['500103', '500105', '500112', '500106'],
    districts: ['渝中区', '江北区', '渝北区', '沙坪坝区'],
    weight: 4,
  },
  61: {
    name: '西安',
    divisions: ['610113', '610104', '610112', '610116'],
    districts: ['雁塔区', '莲湖区', '未央区', '长安区'],
    weight: 3,
  },
  43: {
    name: '长沙',
    divisions: ['430104', '430105', '430103', '430111'],
    districts: ['岳麓区', '开福区', '天心区', '雨花区'],
    weight: 3,
  },
  41: {
    name: '郑州',
    divisions: ['410105', '410102', '410104', '410122'],
    districts: ['金水区', '中原区', '管城回族区', '中牟县'],
    weight: 3,
  },
  52: {
    name: '贵阳',
    divisions: ['520102', '520103', '520115', '520113'],
    districts: ['南明区', '云岩区', '观山湖区', '白云区'],
    weight: 2,
  },
  21: {
    name: '大连',
    divisions: ['210202', '210203', '210204', '210211'],
    districts: ['中山区', '西岗区', '沙河口区', '甘井子区'],
    weight: 2,
  },
};

export const SURNAMES = [
  ...'王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤',
];
export const GIVEN = [
  ...'伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰萍红鹏辉建国志文斌宇浩凯晨欣怡婷雪琳博航帆彬晓东海波宁峰亮健鑫颖佳倩瑶嘉',
];
export const TRADE_CHARS = [
  ...'星辰华拓鼎盛恒通远航锐博睿智云腾海纳宏图天成嘉禾瑞丰信达金源汇聚卓越创新未来晨光和信正泰安康永泰中科联合蓝海启明北辰南方东方',
];

/** Industry word in a name → [section letter, INDUSTRYBIG, industry_middle, business scope phrases]. */
export const INDUSTRIES: { word: string; section: string; big: string; middle: string; scope: string[] }[] = [
  {
    word: '信息科技',
    section: 'I',
    big: '软件和信息技术服务业',
    middle: '软件开发',
    scope: [
      '技术服务、技术开发、技术咨询、技术交流、技术转让、技术推广',
      '软件开发',
      '信息系统集成服务',
      '数据处理和存储支持服务',
    ],
  },
  {
    word: '网络科技',
    section: 'I',
    big: '互联网和相关服务',
    middle: '互联网信息服务',
    scope: ['网络技术服务', '互联网数据服务', '信息技术咨询服务', '广告设计、代理'],
  },
  {
    word: '电子',
    section: 'C',
    big: '计算机、通信和其他电子设备制造业',
    middle: '通信设备制造',
    scope: ['电子元器件制造', '电子产品销售', '通讯设备销售', '货物进出口'],
  },
  {
    word: '贸易',
    section: 'F',
    big: '批发业',
    middle: '贸易经纪与代理',
    scope: ['日用百货销售', '五金产品批发', '化工产品销售（不含许可类化工产品）', '货物进出口'],
  },
  {
    word: '实业',
    section: 'L',
    big: '商务服务业',
    middle: '企业管理',
    scope: ['企业管理咨询', '市场营销策划', '会议及展览服务', '物业管理'],
  },
  {
    word: '建设工程',
    section: 'E',
    big: '土木工程建筑业',
    middle: '市政道路工程建筑',
    scope: ['建设工程施工', '住宅室内装饰装修', '园林绿化工程施工', '建筑材料销售'],
  },
  {
    word: '生物医药',
    section: 'C',
    big: '医药制造业',
    middle: '化学药品制剂制造',
    scope: ['药品生产', '医学研究和试验发展', '第一类医疗器械销售', '技术进出口'],
  },
  {
    word: '餐饮管理',
    section: 'H',
    big: '餐饮业',
    middle: '正餐服务',
    scope: ['餐饮服务', '食品销售', '餐饮管理', '外卖递送服务'],
  },
  {
    word: '物流',
    section: 'G',
    big: '装卸搬运和仓储业',
    middle: '通用仓储',
    scope: [
      '普通货物仓储服务（不含危险化学品等需许可审批的项目）',
      '国内货物运输代理',
      '道路货物运输（不含危险货物）',
      '装卸搬运',
    ],
  },
  {
    word: '新能源',
    section: 'D',
    big: '电力、热力生产和供应业',
    middle: '太阳能发电',
    scope: ['太阳能发电技术服务', '储能技术服务', '新能源原动设备销售', '合同能源管理'],
  },
  {
    word: '文化传媒',
    section: 'R',
    big: '广播、电视、电影和录音制作业',
    middle: '影视节目制作',
    scope: ['组织文化艺术交流活动', '广告制作', '广播电视节目制作经营', '数字内容制作服务'],
  },
  {
    word: '投资管理',
    section: 'J',
    big: '资本市场服务',
    middle: '投资与资产管理',
    scope: ['以自有资金从事投资活动', '企业管理咨询', '财务咨询', '社会经济咨询服务'],
  },
  {
    word: '教育科技',
    section: 'P',
    big: '教育',
    middle: '职业技能培训',
    scope: ['教育咨询服务（不含涉许可审批的教育培训活动）', '软件开发', '组织文化艺术交流活动'],
  },
  {
    word: '农业发展',
    section: 'A',
    big: '农业',
    middle: '蔬菜种植',
    scope: ['蔬菜种植', '农产品的生产、销售、加工、运输、贮藏及其他相关服务', '农业机械服务'],
  },
];

/** Enterprise type codes (DOMAIN.md) with their weights. */
export const ENT_TYPES: [string, string, number][] = [
  ['1130', '有限责任公司(自然人投资或控股)', 40],
  ['1151', '有限责任公司(自然人独资)', 14],
  ['1190', '其他有限责任公司', 8],
  ['1153', '有限责任公司(非自然人投资或控股的法人独资)', 6],
  ['1222', '股份有限公司(非上市、自然人投资或控股)', 5],
  ['1212', '股份有限公司(上市)', 1],
  ['2190', '其他有限责任公司分公司', 5],
  ['4531', '普通合伙企业', 3],
  ['4533', '有限合伙企业', 4],
  ['5110', '有限责任公司(中外合资)', 3],
  ['5150', '有限责任公司(外国法人独资)', 3],
  ['9100', '农民专业合作社', 2],
];

/** Forms that end a name, by type code prefix. */
export function formFor(typeCode: string): string {
  if (typeCode.startsWith('12')) return '股份有限公司';
  if (typeCode.startsWith('2')) return '有限公司分公司';
  if (typeCode === '4531') return '企业（普通合伙）';
  if (typeCode === '4533') return '企业（有限合伙）';
  if (typeCode === '9100') return '专业合作社';
  return '有限公司';
}

export const GOOD_STATUSES: [string, number][] = [
  ['存续', 45],
  ['在业', 20],
  ['存续（在营、开业、在册）', 15],
  ['开业', 5],
  ['在营（开业）企业', 3],
];
export const BAD_STATUSES: [string, number][] = [
  ['注销', 5],
  ['吊销，未注销', 3],
  ['吊销，已注销', 1],
  ['清算', 1],
  ['迁出', 1],
  ['停业', 0.5],
  ['撤销', 0.5],
];
export const REVOKE_REASONS = [
  '未按规定接受年度检验',
  '连续六个月未开展经营活动',
  '未依法报送年度报告',
  '通过登记的住所或者经营场所无法联系',
];

export const POSITIONS = [
  '执行董事',
  '监事',
  '经理',
  '董事长',
  '董事',
  '总经理',
  '执行董事兼总经理',
  '财务负责人',
];
export const NATURAL_SHAREHOLDER_TYPES = ['自然人股东', '非农民自然人', '自然人股东', '外籍自然人', '华侨'];
export const ENTERPRISE_SHAREHOLDER_TYPES = [
  '企业法人',
  '合伙企业',
  '企业法人',
  '事业法人',
  '社团法人',
  '外国(地区)企业',
  '其他投资者',
];
export const CAPITAL_UNITS: [string, number][] = [
  ['万人民币', 70],
  ['万元人民币', 12],
  ['万美元', 6],
  ['万港元', 4],
  ['万(元)', 3],
  ['万欧元', 1],
];
export const CAPITAL_AMOUNTS = [
  10, 50, 100, 200, 300, 500, 800, 1000, 2000, 3000, 5000, 10000, 64913.5, 1200.5,
];
export const ROADS = [
  '人民路',
  '中山路',
  '解放路',
  '建设路',
  '科技路',
  '创新大道',
  '世纪大道',
  '长江路',
  '黄河路',
  '和平路',
  '高新大道',
  '滨江大道',
];
export const SCOPE_TAIL = '（依法须经批准的项目，经相关部门批准后方可开展经营活动）';
